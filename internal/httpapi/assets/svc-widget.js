/*
 * svc chat widget (served at GET /svc-widget.js).
 *
 * Embed one script element:
 *
 *   <script src="https://svc.example.com/svc-widget.js"
 *           data-server="https://svc.example.com"
 *           data-workflow-id="chat"
 *           data-secret="<Webhook secret or minted token>"
 *           data-token="<read-scoped token, for replies>"></script>
 *
 * Optional: data-session-id, data-allow-images (true|false),
 * data-max-length (default 2000), data-theme (light|dark).
 *
 * Plain ES2018, no dependencies. Every piece of text from the visitor or the
 * server is rendered with textContent, never as markup.
 */
(function () {
  'use strict';

  var PREFIX = 'svc-widget: ';
  var DEFAULT_MAX_LENGTH = 2000;
  var DEFAULT_REPLY_TIMEOUT_MS = 30000;
  var BACKOFF_MIN_MS = 1000;
  var BACKOFF_MAX_MS = 30000;
  // How long a send waits for the event stream to be connected, so that
  // the reply (the stream has no replay) is not missed.
  var STREAM_WAIT_MS = 3000;

  var script = document.currentScript;
  if (!script) {
    var found = document.querySelectorAll('script[src*="svc-widget.js"]');
    script = found.length ? found[found.length - 1] : null;
  }
  if (!script) {
    console.error(PREFIX + 'cannot find its script element');
    return;
  }

  function attr(name) {
    var v = script.getAttribute(name);
    if (v === null) return null;
    v = v.trim();
    return v === '' ? null : v;
  }

  var server = attr('data-server');
  var workflowId = attr('data-workflow-id');
  var secret = attr('data-secret');
  var missing = [];
  if (!server) missing.push('data-server');
  if (!workflowId) missing.push('data-workflow-id');
  if (!secret) missing.push('data-secret');
  if (missing.length) {
    console.error(PREFIX + 'missing required attribute' + (missing.length > 1 ? 's ' : ' ') +
      missing.join(', ') + '; the widget is not shown');
    return;
  }
  server = server.replace(/\/+$/, '');

  var token = attr('data-token');
  var allowImages = (attr('data-allow-images') || 'true').toLowerCase() !== 'false';
  var theme = (attr('data-theme') || 'light').toLowerCase() === 'dark' ? 'dark' : 'light';
  var maxLength = positiveInt(attr('data-max-length'), DEFAULT_MAX_LENGTH, 'data-max-length');
  var replyTimeoutMs = positiveInt(attr('data-reply-timeout-ms'), DEFAULT_REPLY_TIMEOUT_MS, 'data-reply-timeout-ms');
  var sessionId = attr('data-session-id') || storedSession();

  function positiveInt(raw, def, name) {
    if (raw === null) return def;
    if (!/^\d+$/.test(raw) || Number(raw) <= 0) {
      console.warn(PREFIX + name + ' is not a positive integer; using ' + def);
      return def;
    }
    return Number(raw);
  }

  function newSessionId() {
    if (window.crypto && typeof window.crypto.randomUUID === 'function') {
      return window.crypto.randomUUID();
    }
    var bytes = new Uint8Array(16);
    if (window.crypto && typeof window.crypto.getRandomValues === 'function') {
      window.crypto.getRandomValues(bytes);
    } else {
      for (var i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
    }
    var hex = '';
    for (var j = 0; j < bytes.length; j++) hex += (bytes[j] < 16 ? '0' : '') + bytes[j].toString(16);
    return hex;
  }

  // storedSession returns the visitor's session id from localStorage,
  // creating it on the first visit. Without storage (privacy modes) the id
  // lives as long as the page.
  function storedSession() {
    var key = 'svc-widget-session:' + workflowId;
    try {
      var v = window.localStorage.getItem(key);
      if (v) return v;
      v = newSessionId();
      window.localStorage.setItem(key, v);
      return v;
    } catch (e) {
      return newSessionId();
    }
  }

  // Characters as the visitor sees them (code points, not UTF-16 units).
  function charCount(s) {
    return Array.from(s).length;
  }

  // ---- styles ----

  var CSS = [
    '.svcw-root{position:fixed;right:20px;bottom:20px;z-index:2147483000;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;}',
    '.svcw-root *{box-sizing:border-box;}',
    '.svcw-theme-light{--svcw-bg:#ffffff;--svcw-fg:#1f2328;--svcw-muted:#656d76;--svcw-border:#d0d7de;--svcw-accent:#2563eb;--svcw-accent-fg:#ffffff;--svcw-bot:#f1f3f5;--svcw-error-bg:#fdecea;--svcw-error-fg:#b42318;--svcw-banner-bg:#fff8e1;--svcw-banner-fg:#7a5b00;--svcw-input-bg:#ffffff;}',
    '.svcw-theme-dark{--svcw-bg:#1e2127;--svcw-fg:#e6e6e6;--svcw-muted:#9aa4b2;--svcw-border:#3a3f48;--svcw-accent:#3b82f6;--svcw-accent-fg:#ffffff;--svcw-bot:#2c313a;--svcw-error-bg:#4a1f1f;--svcw-error-fg:#ffb4ab;--svcw-banner-bg:#3d3414;--svcw-banner-fg:#f5d982;--svcw-input-bg:#15171c;}',
    '.svcw-launcher{width:56px;height:56px;border-radius:50%;border:none;background:var(--svcw-accent);color:var(--svcw-accent-fg);cursor:pointer;box-shadow:0 4px 14px rgba(0,0,0,.25);display:flex;align-items:center;justify-content:center;padding:0;margin-left:auto;}',
    '.svcw-launcher:focus-visible,.svcw-send:focus-visible,.svcw-close:focus-visible{outline:3px solid var(--svcw-accent);outline-offset:2px;}',
    '.svcw-launcher svg{width:28px;height:28px;fill:currentColor;}',
    '.svcw-panel{display:none;flex-direction:column;position:absolute;right:0;bottom:72px;width:340px;max-width:calc(100vw - 40px);height:480px;max-height:calc(100vh - 112px);background:var(--svcw-bg);color:var(--svcw-fg);border:1px solid var(--svcw-border);border-radius:12px;box-shadow:0 8px 28px rgba(0,0,0,.28);overflow:hidden;}',
    '.svcw-panel.svcw-open{display:flex;}',
    '.svcw-header{display:flex;align-items:center;justify-content:space-between;padding:10px 14px;background:var(--svcw-accent);color:var(--svcw-accent-fg);font-weight:600;}',
    '.svcw-close{background:none;border:none;color:inherit;font-size:20px;line-height:1;cursor:pointer;padding:2px 6px;}',
    '.svcw-banner{padding:8px 14px;background:var(--svcw-banner-bg);color:var(--svcw-banner-fg);font-size:13px;border-bottom:1px solid var(--svcw-border);}',
    '.svcw-messages{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:8px;}',
    '.svcw-msg{max-width:85%;padding:8px 11px;border-radius:12px;white-space:pre-wrap;word-wrap:break-word;overflow-wrap:anywhere;}',
    '.svcw-msg-user{align-self:flex-end;background:var(--svcw-accent);color:var(--svcw-accent-fg);border-bottom-right-radius:4px;}',
    '.svcw-msg-bot{align-self:flex-start;background:var(--svcw-bot);color:var(--svcw-fg);border-bottom-left-radius:4px;}',
    '.svcw-msg-error{align-self:stretch;max-width:100%;background:var(--svcw-error-bg);color:var(--svcw-error-fg);font-size:13px;}',
    '.svcw-img{display:block;max-width:100%;height:auto;border-radius:8px;margin:4px 0;}',
    '.svcw-typing{align-self:flex-start;color:var(--svcw-muted);font-style:italic;font-size:13px;padding:2px 4px;}',
    '.svcw-form{display:flex;gap:8px;padding:10px;border-top:1px solid var(--svcw-border);}',
    '.svcw-input{flex:1;resize:none;min-height:38px;max-height:120px;padding:8px 10px;border:1px solid var(--svcw-border);border-radius:8px;background:var(--svcw-input-bg);color:var(--svcw-fg);font:inherit;}',
    '.svcw-input:focus{outline:2px solid var(--svcw-accent);outline-offset:-1px;}',
    '.svcw-send{border:none;border-radius:8px;padding:0 14px;background:var(--svcw-accent);color:var(--svcw-accent-fg);font:inherit;font-weight:600;cursor:pointer;}'
  ].join('\n');

  // ---- DOM ----

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function chatIcon() {
    var ns = 'http://www.w3.org/2000/svg';
    var svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('aria-hidden', 'true');
    var path = document.createElementNS(ns, 'path');
    path.setAttribute('d', 'M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4H4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z');
    svg.appendChild(path);
    return svg;
  }

  var root = el('div', 'svcw-root svcw-theme-' + theme);
  var panel = el('div', 'svcw-panel');
  panel.setAttribute('role', 'dialog');
  panel.setAttribute('aria-label', 'Chat');
  var header = el('div', 'svcw-header');
  header.appendChild(el('span', 'svcw-title', 'Chat'));
  var closeBtn = el('button', 'svcw-close', '\u00d7');
  closeBtn.type = 'button';
  closeBtn.setAttribute('aria-label', 'Close chat');
  header.appendChild(closeBtn);
  panel.appendChild(header);
  if (!token) {
    var banner = el('div', 'svcw-banner', 'Replies are unavailable: this widget has no event token.');
    banner.setAttribute('role', 'status');
    panel.appendChild(banner);
  }
  var messages = el('div', 'svcw-messages');
  messages.setAttribute('role', 'log');
  messages.setAttribute('aria-live', 'polite');
  panel.appendChild(messages);
  var form = el('form', 'svcw-form');
  var input = el('textarea', 'svcw-input');
  input.rows = 1;
  input.placeholder = 'Type a message\u2026';
  input.setAttribute('aria-label', 'Message');
  var sendBtn = el('button', 'svcw-send', 'Send');
  sendBtn.type = 'submit';
  form.appendChild(input);
  form.appendChild(sendBtn);
  panel.appendChild(form);

  var launcher = el('button', 'svcw-launcher');
  launcher.type = 'button';
  launcher.setAttribute('aria-label', 'Open chat');
  launcher.setAttribute('aria-expanded', 'false');
  launcher.appendChild(chatIcon());
  root.appendChild(panel);
  root.appendChild(launcher);

  function setOpen(open) {
    panel.classList.toggle('svcw-open', open);
    launcher.setAttribute('aria-expanded', open ? 'true' : 'false');
    launcher.setAttribute('aria-label', open ? 'Close chat' : 'Open chat');
    if (open) input.focus();
  }
  launcher.addEventListener('click', function () {
    setOpen(!panel.classList.contains('svcw-open'));
  });
  closeBtn.addEventListener('click', function () {
    setOpen(false);
    launcher.focus();
  });
  panel.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') {
      setOpen(false);
      launcher.focus();
    }
  });
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    send();
  });
  input.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });

  function mount() {
    var style = el('style');
    style.setAttribute('data-svcw', '');
    style.textContent = CSS;
    (document.head || document.documentElement).appendChild(style);
    document.body.appendChild(root);
  }
  if (document.body) {
    mount();
  } else {
    document.addEventListener('DOMContentLoaded', mount);
  }

  // ---- bubbles ----

  function scrollDown() {
    messages.scrollTop = messages.scrollHeight;
  }

  function bubble(kind, text) {
    var b = el('div', 'svcw-msg svcw-msg-' + kind, text);
    if (kind === 'error') b.setAttribute('role', 'alert');
    messages.insertBefore(b, typing && typing.parentNode === messages ? typing : null);
    scrollDown();
    return b;
  }

  function errorBubble(text) {
    return bubble('error', text);
  }

  var typing = null;

  function showTyping() {
    if (typing) return;
    typing = el('div', 'svcw-typing', 'Typing\u2026');
    typing.setAttribute('aria-label', 'The reply is being written');
    messages.appendChild(typing);
    scrollDown();
  }

  function hideTyping() {
    if (typing && typing.parentNode) typing.parentNode.removeChild(typing);
    typing = null;
  }

  function asText(v) {
    if (typeof v === 'string') return v;
    if (v === undefined) return '';
    try {
      return JSON.stringify(v);
    } catch (e) {
      return String(v);
    }
  }

  var IMAGE_MIME = /^image\/[a-z0-9.+-]+$/i;
  var BASE64 = /^[A-Za-z0-9+/=\s]*$/;

  // renderReply shows an Output node's output ({value, label, type,
  // output_type}) as a bot bubble.
  function renderReply(result) {
    var isOutput = result !== null && typeof result === 'object' && !Array.isArray(result) &&
      Object.prototype.hasOwnProperty.call(result, 'value');
    var value = isOutput ? result.value : result;
    var files = isOutput && result.output_type === 'media_batch' && value && Array.isArray(value.files) ? value.files : null;
    if (!files) {
      bubble('bot', asText(value));
      return;
    }
    var b = bubble('bot');
    var lines = [];
    function flushText() {
      if (lines.length) {
        b.appendChild(el('div', 'svcw-file', lines.join('\n')));
        lines = [];
      }
    }
    files.forEach(function (f) {
      f = f && typeof f === 'object' ? f : {};
      var name = typeof f.name === 'string' && f.name ? f.name : 'file';
      var mime = typeof f.mime_type === 'string' ? f.mime_type : '';
      var data = typeof f.data === 'string' ? f.data : '';
      if (allowImages && IMAGE_MIME.test(mime) && data && BASE64.test(data)) {
        flushText();
        var img = el('img', 'svcw-img');
        img.alt = name;
        img.src = 'data:' + mime + ';base64,' + data.replace(/\s+/g, '');
        img.addEventListener('load', scrollDown);
        b.appendChild(img);
      } else {
        // Without images (or for other files) a file is shown by its name:
        // its base64 data is never dumped into the chat.
        lines.push(name);
      }
    });
    flushText();
    scrollDown();
  }

  // ---- sending ----

  // pending counts messages sent whose reply has not arrived.
  var pending = 0;

  function send() {
    var text = input.value.trim();
    if (text === '') return;
    var n = charCount(text);
    if (n > maxLength) {
      errorBubble('Message is too long (' + n + ' characters; at most ' + maxLength + ').');
      return;
    }
    bubble('user', text);
    input.value = '';
    pending++;
    streamReady(STREAM_WAIT_MS).then(function () {
      return fetch(server + '/api/widget/' + encodeURIComponent(workflowId) + '/trigger', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ secret: secret, session_id: sessionId, body: { message: text, session_id: sessionId } }),
        credentials: 'omit',
        cache: 'no-store'
      });
    }).then(function (res) {
      if (res.ok) {
        sent();
        return;
      }
      pending = Math.max(0, pending - 1);
      var fallback = 'The message could not be sent (HTTP ' + res.status + ').';
      return res.json().then(function (body) {
        errorBubble(body && typeof body.error === 'string' && body.error ? body.error : fallback);
      }, function () {
        errorBubble(fallback);
      });
    }, function () {
      pending = Math.max(0, pending - 1);
      errorBubble('The server cannot be reached.');
    });
  }

  // sent runs when the server acknowledged a message.
  function sent() {
    if (token) return; // the reply comes on the event stream
    pending = Math.max(0, pending - 1);
    setTimeout(function () {
      errorBubble('No reply: replies are unavailable without an event token.');
    }, replyTimeoutMs);
  }

  // ---- replies: the event stream ----

  var streamStopped = !token;
  var streamConnected = false;
  var readyWaiters = [];

  function setConnected(v) {
    streamConnected = v;
    if (v || streamStopped) {
      var ws = readyWaiters;
      readyWaiters = [];
      ws.forEach(function (f) { f(); });
    }
  }

  // streamReady resolves once the event stream is connected (or will not
  // be), or after ms.
  function streamReady(ms) {
    if (streamConnected || streamStopped) return Promise.resolve();
    return new Promise(function (resolve) {
      var done = false;
      function finish() {
        if (!done) {
          done = true;
          resolve();
        }
      }
      readyWaiters.push(finish);
      setTimeout(finish, ms);
    });
  }

  function handleEvent(msg) {
    if (!msg || typeof msg !== 'object' || msg.event !== 'scheduler-status') return;
    var p = msg.payload;
    if (!p || typeof p !== 'object') return;
    if (typeof p.workflow_id === 'string' && p.workflow_id !== workflowId) return;
    var result = p.last_result;
    if (result !== null && result !== undefined) {
      hideTyping();
      pending = Math.max(0, pending - 1);
      renderReply(result);
      return;
    }
    if (p.status === 'error' && typeof p.last_error === 'string' && p.last_error) {
      hideTyping();
      pending = Math.max(0, pending - 1);
      errorBubble(p.last_error);
      return;
    }
    if (p.status === 'running' && pending > 0) showTyping();
  }

  // sseParser returns a function fed with decoded text; it calls onMessage
  // with the data of each complete message. Lines end with \n, \r\n or \r,
  // and a chunk may end anywhere (even between \r and \n).
  function sseParser(onMessage) {
    var buf = '';
    var data = [];
    function line(l) {
      if (l === '') {
        if (data.length) {
          var d = data.join('\n');
          data = [];
          onMessage(d);
        }
        return;
      }
      if (l.charAt(0) === ':') return; // comment (keep-alive)
      var i = l.indexOf(':');
      var field = i < 0 ? l : l.slice(0, i);
      var value = i < 0 ? '' : l.slice(i + 1);
      if (value.charAt(0) === ' ') value = value.slice(1);
      if (field === 'data') data.push(value);
      // event:, id:, retry: and unknown fields are ignored.
    }
    return function (text) {
      buf += text;
      var start = 0;
      for (var i = 0; i < buf.length; i++) {
        var c = buf.charCodeAt(i);
        if (c === 10) {
          line(buf.slice(start, i));
          start = i + 1;
        } else if (c === 13) {
          if (i + 1 === buf.length) break; // \r\n may be split: wait
          line(buf.slice(start, i));
          if (buf.charCodeAt(i + 1) === 10) i++;
          start = i + 1;
        }
      }
      buf = buf.slice(start);
    };
  }

  var backoff = BACKOFF_MIN_MS;

  function reconnectLater() {
    setConnected(false);
    if (streamStopped) return;
    var wait = backoff;
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    setTimeout(connect, wait);
  }

  function connect() {
    if (streamStopped) return;
    var url = server + '/api/events?workflow_id=' + encodeURIComponent(workflowId) +
      '&session_id=' + encodeURIComponent(sessionId);
    fetch(url, {
      headers: { Authorization: 'Bearer ' + token, Accept: 'text/event-stream' },
      credentials: 'omit',
      cache: 'no-store'
    }).then(function (res) {
      if (res.status === 401 || res.status === 403) {
        streamStopped = true;
        setConnected(false);
        errorBubble('Replies are unavailable: the event token was refused (HTTP ' + res.status + ').');
        return;
      }
      if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
      backoff = BACKOFF_MIN_MS;
      setConnected(true);
      var reader = res.body.getReader();
      var decoder = new TextDecoder();
      var feed = sseParser(function (d) {
        var msg;
        try {
          msg = JSON.parse(d);
        } catch (e) {
          return;
        }
        handleEvent(msg);
      });
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) {
            feed(decoder.decode());
            return;
          }
          feed(decoder.decode(r.value, { stream: true }));
          return pump();
        });
      }
      return pump().then(reconnectLater);
    }).catch(reconnectLater);
  }

  if (token) connect();
})();
