package files

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
	"github.com/svcrun/svc/internal/value"
)

func TestCollectFilesPorts(t *testing.T) {
	t.Parallel()
	generic := []node.Port{node.InPort}
	tests := []struct {
		name string
		raw  map[string]any
		want []node.Port
	}{
		{"nil config", nil, generic},
		{"no sources", map[string]any{}, generic},
		{"blank text", map[string]any{"sources": "  "}, generic},
		{"empty array", map[string]any{"sources": []any{}}, generic},
		{"comma text", map[string]any{"sources": "Photos, Scanned PDFs ,"}, []node.Port{
			{ID: "photos", Label: "Photos"}, {ID: "scanned_pdfs", Label: "Scanned PDFs"}}},
		{"array", map[string]any{"sources": []any{"  Team--A!!", "b", 3}}, []node.Port{
			{ID: "team_a", Label: "Team--A!!"}, {ID: "b", Label: "b"}, {ID: "3", Label: "3"}}},
		{"empty id", map[string]any{"sources": []any{"a", "???", "日本"}}, []node.Port{
			{ID: "a", Label: "a"}, {ID: "source_2", Label: "???"}, {ID: "source_3", Label: "日本"}}},
		{"duplicates", map[string]any{"sources": []any{"Photos", "photos", "PHOTOS!", "photos_2"}}, []node.Port{
			{ID: "photos", Label: "Photos"}, {ID: "photos_2", Label: "photos"}, {ID: "photos_3", Label: "PHOTOS!"},
			{ID: "photos_2_2", Label: "photos_2"}}},
		{"number", map[string]any{"sources": 12}, generic},
		{"object", map[string]any{"sources": map[string]any{"a": 1}}, generic},
		{"nested array", map[string]any{"sources": []any{[]any{"a"}, map[string]any{}}}, generic},
		{"boolean", map[string]any{"sources": true}, generic},
	}
	s := CollectFilesSpec()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ins, outs := s.Ports(tt.raw)
			if !slices.Equal(ins, tt.want) {
				t.Errorf("inputs = %v; want %v", ins, tt.want)
			}
			if !slices.Equal(outs, []node.Port{node.OutPort}) {
				t.Errorf("outputs = %v; want [out]", outs)
			}
		})
	}
}

func TestCollectFilesSpec(t *testing.T) {
	t.Parallel()
	s := CollectFilesSpec()
	if s.TypeID != "collect_files" || s.DisplayName != "Collect Files" || s.Category != node.CategoryLogic || !s.Enabled {
		t.Errorf("spec = %s %q %s enabled %v; want collect_files \"Collect Files\" logic enabled", s.TypeID, s.DisplayName, s.Category, s.Enabled)
	}
	if !slices.Equal(s.Inputs, []node.Port{node.InPort}) || !slices.Equal(s.Outputs, []node.Port{node.OutPort}) {
		t.Errorf("static ports = %v, %v; want [in], [out]", s.Inputs, s.Outputs)
	}
	if _, ok := node.Default().Lookup("collect_files"); !ok {
		t.Errorf("collect_files is not registered")
	}
}

func TestCollectFilesSourcesRefuseExpressions(t *testing.T) {
	t.Parallel()
	// Ports are worked out before a run, so sources cannot depend on one.
	_, err := nodetest.Build(CollectFilesSpec(), map[string]any{"sources": "a, {{ $vars.b }}"})
	var ne *node.Error
	if !errors.As(err, &ne) || ne.Code != node.CodeInvalidConfig || ne.Field != "sources" {
		t.Errorf("Build with an expression in sources: %v; want INVALID_CONFIG naming sources", err)
	}
}

func file(name string) map[string]any {
	return map[string]any{"name": name, "mime_type": "image/png", "data": "QUJD", "size": 3}
}

func media(files ...any) map[string]any {
	return map[string]any{"files": files, "count": len(files), "source": "test"}
}

// collect runs Collect Files with a raw config and inputs.
func collect(t *testing.T, raw map[string]any, ins ...node.Input) (map[string]any, *nodetest.Env, error) {
	t.Helper()
	env := nodetest.New(nil)
	env.Ins = ins
	res, err := nodetest.Run(t.Context(), CollectFilesSpec(), raw, env)
	if err != nil {
		return nil, env, err
	}
	out := res.Output.(map[string]any)
	if out["source"] != "collect_files" || out["count"] != len(out["files"].([]any)) {
		t.Errorf("output %v; want source collect_files and count matching files", out)
	}
	return out, env, nil
}

func names(out map[string]any) []string {
	var n []string
	for _, f := range out["files"].([]any) {
		n = append(n, f.(map[string]any)["name"].(string))
	}
	return n
}

func TestCollectFilesOrderAndNames(t *testing.T) {
	t.Parallel()
	raw := map[string]any{"sources": "First, Second, Third"}
	out, _, err := collect(t, raw,
		node.Input{From: "c", Port: "third", Value: media(file("a.png"))},
		node.Input{From: "a", Port: "first", Value: media(file("a.png"), file("b.txt"))},
		node.Input{From: "b", Port: "second", Value: []any{file("a.png"), file("A.PNG"), file("B.txt")}},
	)
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	want := []string{"a.png", "b.txt", "a_2.png", "A_2_2.PNG", "B_2.txt", "a_3.png"}
	if got := names(out); !slices.Equal(got, want) {
		t.Errorf("names = %v; want %v", got, want)
	}
}

func TestCollectFilesGenericIn(t *testing.T) {
	t.Parallel()
	out, _, err := collect(t, nil,
		node.Input{From: "x", Port: "in", Value: media(file("r.pdf"))},
	)
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if got := names(out); !slices.Equal(got, []string{"r.pdf"}) {
		t.Errorf("names = %v; want [r.pdf]", got)
	}
	out, _, err = collect(t, nil)
	if err != nil {
		t.Fatalf("Run without inputs error: %v", err)
	}
	if files := out["files"].([]any); len(files) != 0 || out["count"] != 0 {
		t.Errorf("output without inputs = %v; want no files", out)
	}
}

func TestCollectFilesUndeclaredPortComesLast(t *testing.T) {
	t.Parallel()
	out, _, err := collect(t, map[string]any{"sources": "a"},
		node.Input{From: "x", Port: "stray", Value: media(file("f"))},
		node.Input{From: "y", Port: "a", Value: media(file("f"))},
	)
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if got := names(out); !slices.Equal(got, []string{"f", "f_2"}) {
		t.Errorf("names = %v; want [f f_2]", got)
	}
}

func TestCollectFilesSources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		value  any
		want   []string
		logged bool
	}{
		{"media object", media(file("a"), file("b")), []string{"a", "b"}, false},
		{"array", []any{file("a")}, []string{"a"}, false},
		{"JSON object text", ` {"files":[{"name":"j.png","data":"QQ=="}]}`, []string{"j.png"}, false},
		{"JSON array text", `[{"filename":"k.txt"}]`, []string{"k.txt"}, false},
		{"empty JSON array text", "[]", nil, false},
		{"plain text", "just words", nil, true},
		{"number", 5, nil, true},
		{"object without files", map[string]any{"name": "x"}, nil, true},
		{"null", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, env, err := collect(t, map[string]any{"sources": "Uploads"},
				node.Input{From: "up", Port: "uploads", Value: tt.value})
			if err != nil {
				t.Fatalf("Run error: %v", err)
			}
			if got := names(out); !slices.Equal(got, tt.want) {
				t.Errorf("names = %v; want %v", got, tt.want)
			}
			if got := env.Logged("source_name=Uploads"); got != tt.logged {
				t.Errorf("logged skip = %v (log %q); want %v", got, env.Log(), tt.logged)
			}
		})
	}
}

func TestCollectFilesEntryNames(t *testing.T) {
	t.Parallel()
	entries := []any{
		map[string]any{"data": "QQ=="},
		map[string]any{"name": "  ", "filename": "report.pdf"},
		map[string]any{"name": "", "filename": ""},
		map[string]any{"name": "FILE.BIN"},
		map[string]any{"name": ".env"},
		map[string]any{"name": ".env"},
		map[string]any{"name": "x.tar.gz"},
		map[string]any{"name": "x.tar.gz"},
	}
	out, _, err := collect(t, nil, node.Input{Port: "in", Value: entries})
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	want := []string{"file.bin", "report.pdf", "file_1.bin", "FILE_1_2.BIN", ".env", ".env_1", "x.tar.gz", "x.tar_1.gz"}
	if got := names(out); !slices.Equal(got, want) {
		t.Errorf("names = %v; want %v", got, want)
	}
}

func TestCollectFilesKeepsEntries(t *testing.T) {
	t.Parallel()
	entry := map[string]any{"filename": "a.png", "mime_type": "image/png", "data": "data:image/png;base64,QUJD", "extra": []any{1}}
	in := media(entry)
	before := value.Encode(in)
	out, _, err := collect(t, nil, node.Input{Port: "in", Value: in})
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if after := value.Encode(in); string(after) != string(before) {
		t.Errorf("input after run = %s; want it unchanged %s", after, before)
	}
	got := out["files"].([]any)[0].(map[string]any)
	if got["name"] != "a.png" || got["data"] != entry["data"] || got["mime_type"] != "image/png" || !value.Equal(got["extra"], []any{1}) {
		t.Errorf("file = %v; want the entry's fields with name a.png", got)
	}
}

func TestCollectFilesErrors(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("A", MaxCollectedData/2+1)
	tests := []struct {
		name string
		ins  []node.Input
		code string
		msg  string
	}{
		{"broken JSON", []node.Input{{Port: "photos", Value: `{"files": [`}}, CodeInvalidSource, `"Photos"`},
		{"broken JSON array", []node.Input{{Port: "docs", Value: " [1,"}}, CodeInvalidSource, `"Docs"`},
		{"entry not object", []node.Input{{Port: "docs", Value: media(file("a"), "b")}}, CodeInvalidFileEntry, "entry 1"},
		{"entry null", []node.Input{{Port: "photos", Value: []any{nil}}}, CodeInvalidFileEntry, "entry 0"},
		{"too large", []node.Input{
			{Port: "photos", Value: []any{map[string]any{"data": big}}},
			{Port: "docs", Value: []any{map[string]any{"data": big}}},
		}, CodeFilesTooLarge, "base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := collect(t, map[string]any{"sources": []any{"Photos", "Docs"}}, tt.ins...)
			if got := node.CodeOf(err); got != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %s %v; want %s naming %s", got, err, tt.code, tt.msg)
			}
		})
	}
}

func TestCollectFilesAtLimit(t *testing.T) {
	t.Parallel()
	half := strings.Repeat("A", MaxCollectedData/2)
	_, _, err := collect(t, nil, node.Input{Port: "in", Value: []any{
		map[string]any{"data": half}, map[string]any{"data": half}}})
	if err != nil {
		t.Errorf("data of exactly %d characters: error %v; want none", MaxCollectedData, err)
	}
}
