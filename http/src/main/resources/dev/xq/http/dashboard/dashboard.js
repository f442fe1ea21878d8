// The XQ node's dashboard: xq:top's view refreshed every second from /api/v1, a chart of each
// queue's device time per command, a timeline of who holds each device (device time, SM share,
// holds), and the policy and hint of the shell. No libraries: the node serves this file and
// nothing else is fetched.
'use strict';
(() => {
  const TOKEN_KEY = 'xq.token';
  const REFRESH_MS = 1000;
  const HISTORY_MS = 120_000;
  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  const PLACEHOLDERS = {};   // kind -> its values' names and an example, from GET /api/v1/hints
  const $ = id => document.getElementById(id);
  // handle -> {name, device, color, last: {t, run_us, completed}, points: [{t, us}], cells: [{t, share, sm, held, busy}]}
  const series = new Map();
  let colorsUsed = 0;
  let policiesShown = false;

  // ------------------------------------------------------------ talking to the node

  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';

  class Refusal extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  // Handles are unsigned 64-bit integers: keep them as the node wrote them (JSON.parse rounds above 2^53).
  const parse = text => JSON.parse(text.replace(/"handle":(\d+)/g, '"handle":"$1"'));

  async function api(method, path, body) {
    const headers = {};
    if (token()) headers.Authorization = 'Bearer ' + token();
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch('api/v1/' + path, {method, headers, cache: 'no-store',
        body: body === undefined ? undefined : JSON.stringify(body)});
    } catch (e) {
      throw new Refusal(0, 'the node does not answer: ' + e.message);
    }
    const text = await res.text();
    let json;
    try {
      json = parse(text);
    } catch (e) {
      throw new Refusal(res.status, 'the node answered ' + res.status + ' with something that is not its API\'s JSON');
    }
    if (!res.ok) throw new Refusal(res.status, typeof json.error === 'string' ? json.error : 'HTTP ' + res.status);
    return json;
  }

  function problem(e) {
    const p = $('problem');
    p.hidden = !e;
    p.textContent = !e ? '' : e.status === 401 ? e.message + ' (type the node\'s token at the top)' : e.message;
  }

  function say(output, ok, text) {
    output.className = ok ? 'ok' : 'err';
    output.textContent = text;
  }

  // ------------------------------------------------------------ xq:top's words

  const fixed1 = v => (typeof v === 'number' ? v : NaN).toFixed(1);

  function headLine(s) {
    return `policy ${s.active} (selected ${s.selected})  decisions ${s.decisions}  swaps ${s.swaps}  watchdog ${s.watchdog_trips}`
      + `  decision p50 ${fixed1(s.decision_p50_us)} us  p99 ${fixed1(s.decision_p99_us)} us`;
  }

  // the LIMITS column, in xq:queues' words: empty while the configured limits apply
  const LIMITS = {alone: 'alone', on_top: 'on top', guarded: 'guarded', narrowed: 'narrowed'};

  // the LAG column, in xq:queues' words: slow/timed busy periods, empty when none were timed
  function lagText(q) {
    return typeof q.device_lags === 'number' && q.device_lags > 0 ? q.slow_device_lags + '/' + q.device_lags : '';
  }

  // the WIDTH column, in xq:queues' words: now/widest of the device's multiprocessors, empty when not told
  function widthText(q) {
    return typeof q.device_sms === 'number' && q.device_sms > 0
      ? q.stretch_width_sms + '/' + q.width_sms + ' of ' + q.device_sms : '';
  }

  // the node writes each hint as xq:queues shows it (Hint.text())
  function hintText(h) {
    return typeof h.text === 'string' ? h.text : h.kind + '=' + h.values.map(String).join('/');
  }

  function showQueues(queues) {
    const rows = queues.map(q => {
      const tr = document.createElement('tr');
      tr.dataset.handle = q.handle;
      tr.dataset.name = q.name;
      const cells = [q.handle, q.name, q.device, q.group, q.state + (q.suspended_by_app ? '(app)' : ''), q.level, q.pending,
        q.in_flight, q.completed, q.failed, q.cancelled, q.estimated_command_us, Math.floor(q.run_us / 1000),
        typeof q.sm_share_percent === 'number' ? q.sm_share_percent : 100, widthText(q), lagText(q), LIMITS[q.limits] || '',
        q.hints.map(hintText).join(' ')];
      for (const c of cells) {
        const td = document.createElement('td');
        td.textContent = String(c);
        tr.appendChild(td);
      }
      return tr;
    });
    $('queues').tBodies[0].replaceChildren(...rows);
    $('no-queues').hidden = queues.length > 0;

    // the queue picker changes only when the queues do (rebuilding it would close it under the mouse)
    const pick = $('hint-queue');
    const labels = queues.map(q => `${q.name} (${q.handle})`);
    if (pick.dataset.labels !== labels.join('\n')) {
      const chosen = pick.value;
      pick.replaceChildren(...queues.map((q, i) => new Option(labels[i], q.handle)));
      pick.dataset.labels = labels.join('\n');
      if (queues.some(q => q.handle === chosen)) pick.value = chosen;
    }
  }

  // ------------------------------------------------------------ the chart

  function record(queues, now) {
    const open = new Set();
    for (const q of queues) {
      open.add(q.handle);
      let s = series.get(q.handle);
      if (!s) {
        s = {name: q.name, device: q.device, color: COLORS[colorsUsed++ % COLORS.length], last: null, points: [], cells: []};
        series.set(q.handle, s);
      }
      if (s.last && q.completed > s.last.completed) {
        s.points.push({t: now, us: (q.run_us - s.last.run_us) / (q.completed - s.last.completed)});
      } else if (s.last) {
        s.points.push({t: now, us: null});   // nothing completed: a gap
      }
      if (s.last && now > s.last.t) {
        // its share of the second's device time, its share of the device's multiprocessors, and
        // whether it was held with work waiting or had work at all
        const share = Math.min(1, Math.max(0, (q.run_us - s.last.run_us) / ((now - s.last.t) * 1000)));
        const waiting = q.pending + q.in_flight > 0;
        s.cells.push({t: now, from: s.last.t, share, sm: typeof q.sm_share_percent === 'number' ? q.sm_share_percent : 100,
          held: (q.suspended_by_scheduler || q.suspended_by_app) && waiting, busy: waiting || share > 0});
      }
      s.last = {t: now, run_us: q.run_us, completed: q.completed};
      while (s.points.length && s.points[0].t < now - HISTORY_MS) s.points.shift();
      while (s.cells.length && s.cells[0].t < now - HISTORY_MS) s.cells.shift();
    }
    for (const h of [...series.keys()]) if (!open.has(h)) series.delete(h);
  }

  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = 10 ** Math.floor(Math.log10(v));
    return [1, 2, 5, 10].map(m => m * p).find(m => m >= v);
  }

  const micros = us => (us >= 1000 ? (us / 1000).toFixed(us >= 10_000 ? 0 : 1) + ' ms' : Math.round(us) + ' us');

  function draw(now) {
    const c = $('chart');
    const ratio = window.devicePixelRatio || 1;
    // the CSS gives the size on screen; the canvas gets that many device pixels
    const w = c.clientWidth || 960;
    const h = c.clientHeight || 260;
    if (c.width !== Math.round(w * ratio) || c.height !== Math.round(h * ratio)) {
      c.width = Math.round(w * ratio);
      c.height = Math.round(h * ratio);
    }
    const g = c.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    const left = 64, right = 150, top = 12, bottom = 24;
    const pw = w - left - right, ph = h - top - bottom;
    let max = 0;
    for (const s of series.values()) for (const p of s.points) if (p.us !== null) max = Math.max(max, p.us);
    max = niceMax(max);
    const x = t => left + pw * (1 - (now - t) / HISTORY_MS);
    const y = us => top + ph * (1 - us / max);

    g.font = '11px sans-serif';
    g.strokeStyle = '#ddd';
    g.fillStyle = '#555';
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (let i = 0; i <= 4; i++) {
      const v = max * i / 4;
      g.beginPath(); g.moveTo(left, y(v)); g.lineTo(left + pw, y(v)); g.stroke();
      g.fillText(micros(v), left - 6, y(v));
    }
    g.textAlign = 'center';
    g.textBaseline = 'top';
    for (let s = 0; s <= 120; s += 30) g.fillText(s === 0 ? 'now' : `-${s} s`, x(now - s * 1000), top + ph + 6);

    let row = 0, drawn = 0;
    g.textAlign = 'left';
    g.textBaseline = 'middle';
    for (const s of series.values()) {
      g.strokeStyle = s.color;
      g.fillStyle = s.color;
      g.lineWidth = 1.5;
      g.beginPath();
      let pen = false;
      for (const p of s.points) {
        if (p.us === null) { pen = false; continue; }
        if (pen) g.lineTo(x(p.t), y(p.us)); else g.moveTo(x(p.t), y(p.us));
        pen = true;
        drawn++;
        g.fillRect(x(p.t) - 1.5, y(p.us) - 1.5, 3, 3);
      }
      g.stroke();
      if (row * 16 < ph) {
        g.fillRect(left + pw + 12, top + row * 16 + 2, 10, 10);
        g.fillStyle = '#333';
        g.fillText(s.name, left + pw + 28, top + row * 16 + 7, right - 32);
      }
      row++;
    }
    c.dataset.points = String(drawn);   // what is on the chart, for a test or a curious operator
  }

  // Who holds each device: a row per queue, grouped by device, a cell per refresh. Filled in the
  // queue's color while it had work or used the device, the deeper the more of that interval's
  // device time it had (under MPS queues run at once: a device's rows may add up to more than
  // the interval), as high as its share of the device's multiprocessors; grey while held with work
  // waiting; empty while idle.
  function drawHolders(now) {
    const c = $('holders');
    const rows = [...series.values()].sort((a, b) => a.device < b.device ? -1 : a.device > b.device ? 1 : 0);
    const rowH = 18, top = 8, bottom = 22, left = 190, right = 12;
    const ratio = window.devicePixelRatio || 1;
    const w = c.clientWidth || 960;
    const h = Math.max(60, top + bottom + rowH * Math.max(1, rows.length));
    c.style.height = h + 'px';
    if (c.width !== Math.round(w * ratio) || c.height !== Math.round(h * ratio)) {
      c.width = Math.round(w * ratio);
      c.height = Math.round(h * ratio);
    }
    const g = c.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    const pw = w - left - right;
    const x = t => left + pw * (1 - (now - t) / HISTORY_MS);
    g.font = '11px sans-serif';
    g.fillStyle = '#555';
    g.textAlign = 'center';
    g.textBaseline = 'top';
    const ph = rowH * Math.max(1, rows.length);
    for (let s = 0; s <= 120; s += 30) g.fillText(s === 0 ? 'now' : `-${s} s`, x(now - s * 1000), top + ph + 6);
    let running = 0, held = 0, narrowed = 0;
    rows.forEach((s, i) => {
      const y0 = top + i * rowH;
      g.strokeStyle = '#eee';
      g.beginPath(); g.moveTo(left, y0 + rowH - 0.5); g.lineTo(left + pw, y0 + rowH - 0.5); g.stroke();
      g.textAlign = 'right';
      g.textBaseline = 'middle';
      g.fillStyle = '#333';
      g.fillText(`${s.name} (${s.device})`, left - 8, y0 + rowH / 2, left - 12);
      for (const cell of s.cells) {
        const x0 = Math.max(left, x(cell.from)), x1 = x(cell.t);
        if (x1 <= x0) continue;
        if (cell.held) {
          g.globalAlpha = 1;
          g.fillStyle = '#b8b8b8';
          g.fillRect(x0, y0 + 2, x1 - x0, rowH - 4);
          held++;
        } else if (cell.busy) {
          const hh = (rowH - 4) * Math.max(0.1, cell.sm / 100);
          g.globalAlpha = 0.25 + 0.75 * cell.share;
          g.fillStyle = s.color;
          g.fillRect(x0, y0 + rowH - 2 - hh, x1 - x0, hh);
          running++;
          if (cell.sm < 100) narrowed++;
        }
      }
      g.globalAlpha = 1;
    });
    // what is drawn, for a test or a curious operator
    c.dataset.rows = String(rows.length);
    c.dataset.running = String(running);
    c.dataset.held = String(held);
    c.dataset.narrowed = String(narrowed);
  }

  // ------------------------------------------------------------ refreshing

  // the kinds of hint and their values, from the node's one list (Hint.Kind)
  async function showHintKinds() {
    const h = await api('GET', 'hints');
    const pick = $('hint-kind');
    const chosen = pick.value;
    for (const k of h.hints) PLACEHOLDERS[k.kind] = k.values.join(' ') + ', e.g. ' + k.example.join(' ');
    pick.replaceChildren(...h.hints.map(k => new Option(k.kind, k.kind)));
    if (chosen in PLACEHOLDERS) pick.value = chosen;
    $('hint-values').placeholder = PLACEHOLDERS[pick.value] || '';
  }

  async function showPolicies() {
    const p = await api('GET', 'policies');
    const pick = $('policy');
    pick.replaceChildren(...p.policies.map(x => {
      const label = x.name + (x.set_aside ? ' (set aside: ' + x.set_aside + ')' : '') + ' - ' + x.description;
      const o = new Option(label.length > 64 ? label.slice(0, 63) + '\u2026' : label, x.name);
      o.title = label;
      return o;
    }));
    pick.value = p.selected;
    policiesShown = true;
  }

  async function refresh() {
    try {
      const [s, q] = await Promise.all([api('GET', 'scheduler'), api('GET', 'queues')]);
      const now = Date.now();
      $('head').textContent = headLine(s);
      showQueues(q.queues);
      record(q.queues, now);
      draw(now);
      drawHolders(now);
      if (!policiesShown) {
        await showHintKinds();
        await showPolicies();
      }
      problem(null);
    } catch (e) {
      problem(e);
    }
  }

  function loop() {
    refresh().finally(() => setTimeout(loop, REFRESH_MS));
  }

  // ------------------------------------------------------------ the forms

  $('policy-form').addEventListener('submit', async ev => {
    ev.preventDefault();
    const name = $('policy').value;
    try {
      await api('POST', 'policy', {name});
      say($('policy-result'), true, `selected: ${name} (decides from the next scheduling event)`);
      refresh();
    } catch (e) {
      say($('policy-result'), false, e.message);
    }
  });

  $('hint-kind').addEventListener('change', () => { $('hint-values').placeholder = PLACEHOLDERS[$('hint-kind').value] || ''; });

  $('hint-form').addEventListener('submit', async ev => {
    ev.preventDefault();
    const queue = $('hint-queue').value;
    const kind = $('hint-kind').value;
    if (!queue) { say($('hint-result'), false, 'no queue to hint: none is open'); return; }
    // the values as typed: the node parses and checks them as xq:hint does
    const values = $('hint-values').value.trim().split(/[\s,]+/).filter(v => v !== '');
    try {
      const a = await api('POST', 'hint', {queue, kind, values});
      const set = a.queue.hints.find(h => h.kind === kind);
      say($('hint-result'), true, `queue ${a.queue.handle}: ` + (set ? hintText(set) : kind + ' set'));
      refresh();
    } catch (e) {
      say($('hint-result'), false, e.message);
    }
  });

  function tokenState() {
    $('token-state').textContent = token() ? 'a token is in use (this tab only)' : '';
  }

  $('token-form').addEventListener('submit', ev => {
    ev.preventDefault();
    const t = $('token').value.trim();
    if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
    $('token').value = '';
    tokenState();
    policiesShown = false;
    refresh();
  });
  $('token-forget').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    tokenState();
    refresh();
  });

  tokenState();
  loop();
})();
