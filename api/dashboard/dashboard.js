// The ops dashboard: reads GET /v1/dashboard/stream (Server-Sent Events) with fetch() so that
// the read token travels as an Authorization header, and renders each frame. Text from the
// server is only ever set as textContent, never parsed as HTML.
'use strict';

const TOKEN_KEY = 'mempalace.dashboard.token';
const MAX_LOG_ITEMS = 50;
const $ = (id) => document.getElementById(id);

let controller = null;
let retryTimer = null;
const announced = new Map();

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function setConnection(text) {
  $('connection').textContent = text;
}

function formatEta(seconds) {
  if (seconds === null || seconds === undefined) return '?';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m} min ${Math.round(seconds % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** A job's source and git ref; records older than these fields show a dash. */
function jobSource(j) {
  // A revert works on an agent's writes (narrowed by session and instant), not on a source.
  if (j.agent) return [`agent ${j.agent}`, j.session && `session ${j.session}`, j.since && `since ${j.since}`].filter(Boolean).join(' · ');
  if (!j.source) return '–';
  return j.ref ? `${j.source} @ ${j.ref}` : j.source;
}

function jobCell(j, label) {
  const cell = el('td', {}, el('code', {}, j.job_id.slice(0, 8)));
  if (j.workflow_url) {
    cell.append(' ',
      el('a', { href: j.workflow_url, target: '_blank', rel: 'noopener noreferrer', class: 'workflow', 'aria-label': `Temporal workflow of ${label}` },
        'workflow'));
  }
  return cell;
}

function rateCell(j, label) {
  const cell = el('td', { class: 'rate' }, `${j.rate} files/s`);
  if (j.rate_series && j.rate_series.length > 0) cell.append(el('br'), rateSparkline(j.rate_series, `Rate of ${label}`));
  return cell;
}

function renderJobs({ jobs }) {
  const body = $('jobs').tBodies[0];
  body.replaceChildren();
  if (!jobs || jobs.length === 0) {
    body.append(el('tr', { class: 'empty' }, el('td', { colspan: '12' }, 'No jobs yet.')));
    return;
  }
  for (const j of jobs) {
    const label = `${j.kind} job ${j.job_id.slice(0, 8)}`;
    const bar = el('progress', { 'aria-label': `Progress of ${label}`, 'data-job-id': j.job_id, 'data-state': j.state });
    if (j.files_total > 0) {
      bar.max = j.files_total;
      bar.value = j.state === 'completed' ? j.files_total : j.files_seen;
    } else if (j.state !== 'running') {
      bar.max = 1;
      bar.value = j.state === 'completed' ? 1 : 0;
    }
    const errorsCell = el('td', {}, String(j.errors));
    if (j.recent_errors && j.recent_errors.length > 0) {
      errorsCell.append(el('ul', { class: 'errors' }, ...j.recent_errors.slice(-3).map((e) => el('li', {}, `${e.file}: ${e.error}`))));
    }
    if (j.error) errorsCell.append(el('p', { class: 'errors' }, j.error));
    body.append(
      el('tr', { 'data-job-id': j.job_id }, jobCell(j, label), el('td', {}, j.mode ? `${j.kind} (${j.mode})` : j.kind),
        el('td', { class: 'source' }, jobSource(j)), el('td', { class: 'wing' }, j.wing || '–'), el('td', { class: 'trigger' }, j.trigger || '–'),
        el('td', { class: `state-${j.state}` }, j.state), el('td', {}, bar), el('td', {}, `${j.files_seen} / ${j.files_total}`),
        el('td', {}, String(j.drawers_written)), rateCell(j, label), el('td', {}, j.state === 'running' ? formatEta(j.eta_s) : '–'), errorsCell),
    );
    // Announce state changes (not every progress tick) to screen readers.
    if (announced.get(j.job_id) !== j.state) {
      if (announced.has(j.job_id) || j.state === 'running') $('job-announcer').textContent = `${label} is ${j.state}.`;
      announced.set(j.job_id, j.state);
    }
  }
}

/** Percent of calls that failed in a minute; null in a minute without calls. */
function errorPercent(m) {
  return m.count > 0 ? (100 * m.errors) / m.count : null;
}

function renderMetrics({ minutes }) {
  const labels = minutes.map((m) => m.at);
  const latency = (key) => [
    { name: 'p50', cls: 'p50', values: minutes.map((m) => m[key].p50_ms) },
    { name: 'p95', cls: 'p95', values: minutes.map((m) => m[key].p95_ms) },
  ];
  const place = (id, chart) => $(id).replaceChildren($(id).querySelector('figcaption'), chart);
  place('chart-search', lineChart('Search latency', 'ms', labels, latency('search')));
  place('chart-tools', lineChart('MCP tool call latency', 'ms', labels, latency('tools')));
  place('chart-errors', lineChart('Error rates', '%', labels, [
    { name: 'tools', cls: 'p50', values: minutes.map((m) => errorPercent(m.tools)) },
    { name: 'HTTP 5xx', cls: 'p95', values: minutes.map((m) => errorPercent(m.http)) },
  ]));
}

function renderStats(s) {
  if (s.error) {
    $('stat-drawers').textContent = 'unavailable';
    return;
  }
  $('stat-drawers').textContent = String(s.total_drawers);
  $('stat-wings').textContent = String(Object.keys(s.wings).length);
  $('stat-rooms').textContent = String(Object.keys(s.rooms).length);
  $('stat-profile').textContent = s.profile;
  $('stat-sse').textContent = `${s.sse_clients} / ${s.sse_max_clients}`;
  const body = $('wings').tBodies[0];
  body.replaceChildren(...Object.entries(s.wings).sort((a, b) => b[1] - a[1]).map(([w, n]) => el('tr', {}, el('td', {}, w), el('td', {}, String(n)))));
}

function renderHealth(h) {
  const list = $('health');
  if (!h.engines) {
    list.replaceChildren(el('li', { class: 'down' }, `health unavailable: ${h.error || 'unknown'}`));
    return;
  }
  list.replaceChildren(
    ...Object.entries(h.engines).map(([name, e]) =>
      el('li', { class: e.status, 'data-engine': name }, `${name} (${e.engine}): ${e.status}${e.error ? ` — ${e.error}` : ''}`)
    ),
  );
}

function renderQueues(q) {
  const p = $('queues');
  p.textContent = Object.entries(q.queues || {}).map(([name, depth]) => `${name}: ${depth}`).join(' · ') || 'All queues are empty.';
}

function renderSources({ sources }) {
  const body = $('sources').tBodies[0];
  if (!sources || sources.length === 0) {
    body.replaceChildren(el('tr', { class: 'empty' }, el('td', { colspan: '6' }, 'No registered sources.')));
    return;
  }
  body.replaceChildren(...sources.map((s) => {
    const r = s.last_refresh;
    const when = r ? `${r.state} ${r.finished_at || r.requested_at}` : 'never';
    return el('tr', { 'data-source-id': s.source_id }, el('td', {}, el('code', {}, s.source_id)), el('td', {}, s.location), el('td', {}, s.ref || '–'),
      el('td', { class: r ? `state-${r.state}` : '', 'data-refresh-state': r ? r.state : 'never' }, when),
      el('td', {}, r && r.commit ? el('code', {}, r.commit.slice(0, 10)) : '–'),
      el('td', {}, r && r.drawers_written !== undefined ? String(r.drawers_written) : '–'));
  }));
}

function renderNotifications({ deliveries, dead_letters: dead }) {
  $('dead-letters').textContent = dead && dead.length > 0
    ? `${dead.length} dead letter${dead.length === 1 ? '' : 's'}: ${
      dead.map((d) => `${d.queue}/${d.id} (${d.failedReason})`).join('; ')
    }. Retry with POST /v1/dead-letters/{queue}/{id}/retry.`
    : 'No dead letters.';
  const body = $('deliveries').tBodies[0];
  if (!deliveries || deliveries.length === 0) {
    body.replaceChildren(el('tr', { class: 'empty' }, el('td', { colspan: '5' }, 'No deliveries yet.')));
    return;
  }
  body.replaceChildren(
    ...deliveries.map((d) =>
      el('tr', { 'data-delivery-id': d.id }, el('td', {}, el('code', {}, d.job_id.slice(0, 8))), el('td', {}, `${d.kind} ${d.state}`),
        el('td', { class: `delivery-${d.status}` }, d.status), el('td', {}, String(d.attempts)), el('td', {}, d.error || ''))
    ),
  );
}

function renderEvent(e) {
  const list = $('logstream');
  const to = e.to_agent ? ` → ${e.to_agent}` : '';
  list.append(el('li', {}, el('time', { datetime: e.created_at }, e.created_at), ` ${e.type} ${e.from_agent}${to} [${e.stream}/${e.room}] `, e.body));
  while (list.children.length > MAX_LOG_ITEMS) list.firstElementChild.remove();
}

const HANDLERS = { jobs: renderJobs, stats: renderStats, metrics: renderMetrics, health: renderHealth, queues: renderQueues, sources: renderSources,
  notifications: renderNotifications, logstream: renderEvent };

function dispatch(frame) {
  let event = 'message';
  const data = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  const handler = HANDLERS[event];
  if (handler && data.length > 0) handler(JSON.parse(data.join('\n')));
}

async function connect(token, attempt = 0) {
  disconnect(false);
  controller = new AbortController();
  const signal = controller.signal;
  $('connect').disabled = true;
  $('disconnect').disabled = false;
  setConnection('Connecting…');
  try {
    const res = await fetch('/v1/dashboard/stream', { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' }, signal, cache: 'no-store' });
    if (res.status === 401 || res.status === 403) {
      const body = await res.json().catch(() => ({}));
      sessionStorage.removeItem(TOKEN_KEY);
      disconnect(false);
      setConnection(`Not connected: ${body.error || `the server refused the token (${res.status})`}.`);
      $('token').focus();
      return;
    }
    if (!res.ok || !res.body) throw new Error(`the server answered ${res.status}`);
    sessionStorage.setItem(TOKEN_KEY, token);
    setConnection('Connected: updates are live.');
    attempt = 0;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
    throw new Error('the stream ended');
  } catch (e) {
    if (signal.aborted) return;
    const delay = Math.min(30, 2 ** attempt);
    setConnection(`Connection lost (${e.message}); retrying in ${delay} s.`);
    retryTimer = setTimeout(() => connect(token, attempt + 1), delay * 1000);
  }
}

function disconnect(announce = true) {
  clearTimeout(retryTimer);
  if (controller) controller.abort();
  controller = null;
  $('connect').disabled = false;
  $('disconnect').disabled = true;
  if (announce) setConnection('Disconnected.');
}

document.addEventListener('DOMContentLoaded', () => {
  $('connect-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const token = $('token').value.trim();
    if (token) connect(token);
  });
  $('disconnect').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    disconnect();
  });
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) connect(saved);
});
