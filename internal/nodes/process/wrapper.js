// The Code node's wrapper, run with `node -e`. It reads {code, input,
// context, max_result} as JSON from stdin, runs code as the body of an async
// function of (input, context, output, require), and writes one JSON message
// to fd 3 when the script has ended on its own (the event loop is empty):
// {"result": value}, {"too_large": bytes}, {"no_result": message} or
// {"error": {name, message, line}}. stdout and stderr stay the script's.
// process.exit() skips 'beforeExit', so nothing is written: NO_RESULT.
(function () {
  'use strict';
  const fs = require('fs');
  const writeSync = fs.writeSync;
  const closeSync = fs.closeSync;
  const stringify = JSON.stringify;
  const byteLength = Buffer.byteLength;
  const from = Buffer.from;
  const RESULT_FD = 3;
  // Lines the Function constructor puts before the body.
  const HEADER_LINES = 2;

  // Node writes to a pipe without blocking, queueing in memory what the
  // pipe cannot take: a busy script would then hold its output back (and
  // grow) instead of meeting the flood limit, and process.exit() would
  // drop it. Blocking writes keep printed text in step with the script.
  for (const s of [process.stdout, process.stderr]) {
    if (s._handle && typeof s._handle.setBlocking === 'function') s._handle.setBlocking(true);
  }

  let payload = JSON.parse(fs.readFileSync(0, 'utf8'));
  const limit = payload.max_result;
  let sent = false;
  let outputCalled = false;
  let outputValue;
  let finished = false;
  let returned;

  function send(text) {
    if (sent) return;
    sent = true;
    const buf = from(text, 'utf8');
    let off = 0;
    while (off < buf.length) off += writeSync(RESULT_FD, buf, off, buf.length - off);
    closeSync(RESULT_FD);
  }

  // lineOf finds the line of the user's code in an error's stack.
  function lineOf(stack) {
    if (typeof stack !== 'string') return 0;
    for (const l of stack.split('\n')) {
      const m = /\(eval at .*<anonymous>:(\d+):\d+\)$/.exec(l) || /^\s*at <anonymous>:(\d+):\d+$/.exec(l);
      if (m) return Math.max(Number(m[1]) - HEADER_LINES, 0);
    }
    return 0;
  }

  function describe(e) {
    if (e !== null && typeof e === 'object' && typeof e.message === 'string') {
      return { name: String(e.name || 'Error'), message: e.message.slice(0, 65536), line: lineOf(e.stack) };
    }
    let m;
    try { m = typeof e === 'string' ? e : stringify(e); } catch (_) { m = undefined; }
    if (m === undefined) m = String(e);
    return { name: 'Uncaught', message: String(m).slice(0, 65536), line: 0 };
  }

  function fail(e) {
    if (sent) return;
    send(stringify({ error: describe(e) }));
    process.exitCode = 1;
    // Let printed text reach its pipe before leaving.
    process.stdout.write('', () => process.stderr.write('', () => process.exit(1)));
  }

  function finish() {
    if (sent) return;
    if (!outputCalled && !finished) {
      send(stringify({ no_result: 'the code was still waiting (an await that never settled) when nothing was left to run' }));
      return;
    }
    const value = outputCalled ? outputValue : returned;
    let text;
    try {
      text = stringify(value);
    } catch (e) {
      if (e instanceof RangeError) {
        send(stringify({ too_large: -1 }));
        return;
      }
      fail(new TypeError('output: the value cannot be converted to JSON: ' + e.message));
      return;
    }
    if (text === undefined) text = 'null';
    const n = byteLength(text, 'utf8');
    if (n > limit) {
      send(stringify({ too_large: n }));
      return;
    }
    send('{"result":' + text + '}');
  }

  function output(value) {
    outputCalled = true;
    outputValue = value;
  }

  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  process.on('beforeExit', finish);

  const AsyncFunction = (async function () {}).constructor;
  let fn;
  try {
    fn = new AsyncFunction('input', 'context', 'output', 'require', payload.code);
  } catch (e) {
    fail(e);
    return;
  }
  const input = payload.input;
  const context = payload.context;
  payload = null;
  fn.call(undefined, input, context, output, require).then(
    (v) => { finished = true; returned = v; },
    fail,
  );
})();
