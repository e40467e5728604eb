-- The workflow list reads the summary columns only: a covering index keeps
-- paging and counting off the pages that hold the documents.
CREATE INDEX workflows_summary ON workflows (id, name, updated_at, tags, collection_id);
