// The dashboard: a hash-routed page over the service's own JSON API and its server-sent events.
// No build step and no framework: plain DOM, fetch, and uPlot (vendored, see vendor/LICENSE).
'use strict';

const KEY_STORAGE = 'rlsolver.apiKey';
const TERMINAL = ['succeeded', 'failed', 'cancelled'];
const view = document.getElementById('view');
const flashBox = document.getElementById('flash');
const keyForm = document.getElementById('key-form');
const keyInput = document.getElementById('key-input');
const keyState = document.getElementById('key-state');

// ---- DOM ------------------------------------------------------------------------------------
// Text goes in as text nodes, never as HTML: job requests and errors are user data.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name in node && typeof value !== 'string') node[name] = value;
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const fmt = (x, digits = 4) =>
  x === undefined || x === null ? '–' : typeof x === 'number' ? (Number.isInteger(x) ? x.toLocaleString('en') : Number(x.toPrecision(digits)).toString()) : String(x);
const when = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleString() : '–');
const badge = (state) => el('span', { class: `badge ${state}`, 'data-state': state }, state);
const json = (value) => el('pre', {}, JSON.stringify(value, null, 2));
const facts = (rows) => el('dl', { class: 'facts' }, rows.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));

function flash(message) {
  flashBox.hidden = !message;
  flashBox.textContent = message || '';
}

// ---- API ------------------------------------------------------------------------------------
class ApiError extends Error {
  constructor(status, body) {
    const detail = body && typeof body === 'object' ? [body.title, body.detail].filter(Boolean).join(': ') : body;
    const field = body && body.field ? ` (field: ${body.field})` : '';
    super(`${status} ${detail || 'request failed'}${field}`);
    this.status = status;
    this.body = body;
  }
}

function authHeaders(extra) {
  const headers = Object.assign({}, extra);
  const key = sessionStorage.getItem(KEY_STORAGE);
  if (key) headers.Authorization = `Bearer ${key}`;
  return headers;
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: authHeaders(options.headers) });
  if (response.status === 401) askForKey();
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

const post = (path, body) =>
  api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

// Server-sent events read through fetch (EventSource cannot send the Authorization header).
async function streamEvents(path, signal, onEvent) {
  const response = await fetch(path, { headers: authHeaders({ Accept: 'text/event-stream' }), signal });
  if (response.status === 401) askForKey();
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue;
      let parsed = data.join('\n');
      try {
        parsed = JSON.parse(parsed);
      } catch {
        /* a plain-text event */
      }
      await onEvent(event, parsed);
    }
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Re-reads a list every few seconds while its view is open (only the list: a form being filled
// in keeps its inputs). A failed read is skipped; the next one tries again.
function poll(ctx, refresh, ms = 5000) {
  const timer = setInterval(() => refresh().catch(() => {}), ms);
  ctx.cleanups.push(() => clearInterval(timer));
}

// Follows a job's events until it ends or the view closes. Each connection subscribes first and
// then reads the job's row and curve (`resync`), so no point falls between the two (a point seen
// twice is drawn once). A dropped stream (a server restart, a proxy's timeout) reconnects.
async function follow(ctx, path, resync, ended, onEvent) {
  while (!ctx.signal.aborted) {
    try {
      let fresh = true;
      await streamEvents(`${path}/events`, ctx.signal, async (event, data) => {
        if (fresh) {
          fresh = false;
          await resync();
        }
        await onEvent(event, data);
      });
      if (ended()) return;
    } catch (error) {
      if (ctx.signal.aborted) return;
      flash(`${error.message} (reconnecting)`);
    }
    await sleep(2000);
  }
}

// A file of a job, fetched with the key and handed to the browser as a download.
async function download(path, name) {
  const response = await fetch(path, { headers: authHeaders() });
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  const url = URL.createObjectURL(await response.blob());
  el('a', { href: url, download: name }).click();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// ---- API key --------------------------------------------------------------------------------
function askForKey() {
  keyForm.hidden = false;
  keyInput.focus();
}

function showKeyState() {
  const key = sessionStorage.getItem(KEY_STORAGE);
  keyState.replaceChildren(
    key
      ? el('span', {}, 'API key set · ', el('a', { href: '#', id: 'forget-key', onclick: (e) => { e.preventDefault(); sessionStorage.removeItem(KEY_STORAGE); showKeyState(); render(); } }, 'forget'))
      : ''
  );
}

keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value.trim();
  if (!key) return;
  sessionStorage.setItem(KEY_STORAGE, key);
  keyInput.value = '';
  keyForm.hidden = true;
  showKeyState();
  render();
});

// ---- Charts ---------------------------------------------------------------------------------
// A line over points keyed by x (a point that arrives twice, from the curve and from the
// stream, is drawn once). `data-points` on the container says how many are drawn.
function lineChart({ title, xLabel, yLabel, stepped = false, testId }) {
  const container = el('div', { class: 'chart', 'data-testid': testId, 'data-points': '0' });
  const points = new Map();
  let plot = null;
  const draw = () => {
    const xs = [...points.keys()].sort((a, b) => a - b);
    const ys = xs.map((x) => points.get(x));
    container.dataset.points = String(xs.length);
    if (!xs.length) {
      container.replaceChildren(el('div', { class: 'empty' }, `${title}: no points yet`));
      return;
    }
    if (plot) {
      plot.setData([xs, ys]);
      return;
    }
    container.replaceChildren();
    const series = { label: yLabel, stroke: '#2463c7', width: 2, points: { show: true, size: 5 } };
    if (stepped) series.paths = uPlot.paths.stepped({ align: 1 });
    const width = Math.max(360, (container.clientWidth || view.clientWidth || 900) - 20);
    plot = new uPlot(
      { title, width, height: 300, scales: { x: { time: false } }, axes: [{ label: xLabel }, { label: yLabel }], series: [{ label: xLabel }, series] },
      [xs, ys],
      container
    );
  };
  draw();
  return {
    node: container,
    add(x, y) {
      if (Number.isFinite(x) && Number.isFinite(y)) points.set(x, y);
    },
    draw,
    destroy: () => plot && plot.destroy(),
  };
}

// ---- Router ---------------------------------------------------------------------------------
let current = null;

const routes = [
  [/^#\/?$/, home],
  [/^#\/solve(?:\?(.*))?$/, solveList],
  [/^#\/solve\/([^/?]+)$/, solveJob],
  [/^#\/training$/, trainingList],
  [/^#\/training\/([^/?]+)$/, trainingJob],
  [/^#\/populations$/, populationList],
  [/^#\/populations\/([^/?]+)$/, population],
  [/^#\/models$/, modelList],
  [/^#\/models\/([^/?]+)$/, model],
  [/^#\/problems$/, problemList],
];

async function render() {
  if (current) current.abort();
  const controller = new AbortController();
  current = controller;
  const hash = location.hash || '#/';
  const section = (hash.match(/^#\/(\w+)/) || [null, 'home'])[1];
  for (const link of document.querySelectorAll('header nav a[data-nav]')) link.classList.toggle('active', link.dataset.nav === section);
  flash(null);
  const [pattern, page] = routes.find(([re]) => re.test(hash)) || [null, notFound];
  const args = pattern ? hash.match(pattern).slice(1).map((a) => (a === undefined ? '' : decodeURIComponent(a))) : [];
  view.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  const ctx = {
    signal: controller.signal,
    cleanups: [],
    mount: (...nodes) => {
      if (!controller.signal.aborted) view.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false));
    },
  };
  controller.signal.addEventListener('abort', () => ctx.cleanups.forEach((f) => f()));
  try {
    await page(ctx, ...args);
  } catch (error) {
    if (controller.signal.aborted) return;
    flash(error.message);
    ctx.mount(el('h1', {}, 'Could not load this view'), el('p', { class: 'muted' }, error.message));
  }
}

function notFound(ctx) {
  ctx.mount(el('h1', {}, 'Not found'), el('p', {}, el('a', { href: '#/' }, 'Back to the overview')));
}

// Runs `task`, showing its error in the banner instead of throwing.
async function guarded(task) {
  try {
    flash(null);
    return await task();
  } catch (error) {
    flash(error.message);
    return undefined;
  }
}

// DELETE on `path` (a job or a population), then `done` with the answer; errors go to the banner.
function cancelButton(id, path, done) {
  return el('button', { class: 'danger', id, onclick: async () => {
    const updated = await guarded(() => api(path, { method: 'DELETE' }));
    if (updated) done(updated);
  } }, 'Cancel');
}

// ---- Lists ----------------------------------------------------------------------------------
function trainingRows(jobs) {
  return jobs.map((job) =>
    el('tr', { 'data-id': job.id },
      el('td', {}, el('a', { href: `#/training/${job.id}` }, job.id.slice(0, 8))),
      el('td', {}, badge(job.state)),
      el('td', {}, `${job.request.algorithm} on ${job.request.env}`),
      el('td', { class: 'num' }, `${fmt(job.steps)} / ${fmt(job.request.total_steps)}`),
      el('td', { class: 'num' }, job.latest ? fmt(job.latest.return_mean) : '–'),
      el('td', {}, when(job.created_at))))
}

function trainingTable(jobs) {
  if (!jobs.length) return el('p', { class: 'muted' }, 'No training jobs yet.');
  return el('table', { 'data-testid': 'training-jobs' },
    el('thead', {}, el('tr', {}, el('th', {}, 'job'), el('th', {}, 'state'), el('th', {}, 'run'), el('th', { class: 'num' }, 'steps'), el('th', { class: 'num' }, 'latest return'), el('th', {}, 'created'))),
    el('tbody', {}, trainingRows(jobs)));
}

function solveTable(jobs) {
  if (!jobs.length) return el('p', { class: 'muted' }, 'No solve jobs yet.');
  return el('table', { 'data-testid': 'solve-jobs' },
    el('thead', {}, el('tr', {}, el('th', {}, 'job'), el('th', {}, 'state'), el('th', {}, 'problem'), el('th', { class: 'num' }, 'objective'), el('th', {}, 'created'))),
    el('tbody', {}, jobs.map((job) =>
      el('tr', { 'data-id': job.id },
        el('td', {}, el('a', { href: `#/solve/${job.id}` }, job.id.slice(0, 8))),
        el('td', {}, badge(job.state)),
        el('td', {}, job.request.problem),
        el('td', { class: 'num' }, fmt((job.result || job.latest || {}).objective)),
        el('td', {}, when(job.created_at))))));
}

function populationTable(populations) {
  if (!populations.length) return el('p', { class: 'muted' }, 'No populations yet.');
  return el('table', { 'data-testid': 'populations' },
    el('thead', {}, el('tr', {}, el('th', {}, 'population'), el('th', {}, 'state'), el('th', {}, 'run'), el('th', { class: 'num' }, 'rounds done / total'), el('th', {}, 'created'))),
    el('tbody', {}, populations.map((p) =>
      el('tr', {},
        el('td', {}, el('a', { href: `#/populations/${p.id}` }, p.id.slice(0, 8))),
        el('td', {}, badge(p.state)),
        el('td', {}, `${p.request.scheme || ''} ${p.request.algorithm || ''} on ${p.request.env || ''}`),
        el('td', { class: 'num' }, `${fmt(p.rounds_done)} / ${fmt(p.rounds_total)}`),
        el('td', {}, when(p.created_at))))));
}

// ---- Overview -------------------------------------------------------------------------------
async function home(ctx) {
  await overview(ctx);
  poll(ctx, () => overview(ctx));
}

async function overview(ctx) {
  const settle = (promise) => promise.then((value) => ({ value }), (error) => ({ error }));
  const [problems, models, training, solves, populations] = await Promise.all([
    settle(api('/v1/problems')),
    settle(api('/v1/models')),
    settle(api('/v1/training/jobs?limit=100')),
    settle(api('/v1/solve/jobs?limit=100')),
    settle(api('/v1/populations')),
  ]);
  const firstError = [problems, models, training, solves, populations].find((r) => r.error);
  if (firstError) flash(firstError.error.message);
  const count = (r, f) => (r.value ? fmt(f(r.value)) : '–');
  const active = (jobs) => jobs.filter((j) => !TERMINAL.includes(j.state)).length;
  const card = (figure, label, href) => el('a', { class: 'card', href, style: 'text-decoration:none;color:inherit' }, el('div', { class: 'figure' }, figure), el('div', { class: 'label' }, label));
  ctx.mount(
    el('h1', {}, 'Overview'),
    el('div', { class: 'cards' },
      card(count(problems, (p) => p.length), 'problems', '#/problems'),
      card(count(models, (m) => m.models.length), 'models in the registry', '#/models'),
      card(count(training, active), 'training jobs queued or running', '#/training'),
      card(count(solves, active), 'solve jobs queued or running', '#/solve'),
      card(count(populations, active), 'populations running', '#/populations')),
    el('h2', {}, 'Recent training jobs'),
    training.value ? trainingTable(training.value.slice(0, 8)) : el('p', { class: 'muted' }, '–'),
    el('h2', {}, 'Recent solve jobs'),
    solves.value ? solveTable(solves.value.slice(0, 8)) : el('p', { class: 'muted' }, '–'),
    el('h2', {}, 'Populations'),
    populations.value ? populationTable(populations.value.slice(0, 8)) : el('p', { class: 'muted' }, '–'));
}

// ---- Problems -------------------------------------------------------------------------------
async function problemList(ctx) {
  const problems = await api('/v1/problems');
  ctx.mount(
    el('h1', {}, 'Problems'),
    el('table', { 'data-testid': 'problems' },
      el('thead', {}, el('tr', {}, el('th', {}, 'name'), el('th', {}, 'what it is'), el('th', {}, 'formats'), el('th', {}, 'baselines'), el('th', {}, 'schemas'))),
      el('tbody', {}, problems.map((p) =>
        el('tr', {},
          el('td', {}, el('a', { href: `#/solve?problem=${encodeURIComponent(p.name)}` }, p.name)),
          el('td', {}, p.summary || ''),
          el('td', {}, p.formats.join(', ')),
          el('td', {}, p.baselines.join(', ')),
          el('td', {},
            el('details', {}, el('summary', {}, 'instance'), json(p.instance_schema)),
            el('details', {}, el('summary', {}, 'options'), json(p.options_schema))))))));
}

// ---- Solve ----------------------------------------------------------------------------------
async function solveList(ctx, query) {
  const [problems, jobs] = await Promise.all([api('/v1/problems'), api('/v1/solve/jobs?limit=100')]);
  const wanted = new URLSearchParams(query || '').get('problem');
  const problem = el('select', { id: 'solve-problem', name: 'problem' },
    problems.map((p) => el('option', { value: p.name, selected: p.name === (wanted || 'maxcut') }, p.name)));
  const formats = el('span', { class: 'hint' });
  const showFormats = () => {
    const p = problems.find((q) => q.name === problem.value);
    formats.textContent = p ? `formats: ${p.formats.join(', ')}` : '';
  };
  problem.addEventListener('change', showFormats);
  showFormats();
  const text = el('textarea', { id: 'solve-instance', name: 'instance', placeholder: 'Paste an instance: JSON (see Problems) or the native text format (Gset, DIMACS, OR-Library, TSPLIB, ...)' });
  const file = el('input', { id: 'solve-file', type: 'file' });
  file.addEventListener('change', async () => {
    if (file.files[0]) text.value = await file.files[0].text();
  });
  const format = el('select', { id: 'solve-format' }, el('option', { value: 'auto' }, 'detect'), el('option', { value: 'json' }, 'JSON'), el('option', { value: 'text' }, 'native text'));
  const timeLimit = el('input', { id: 'solve-time-limit', type: 'number', min: '0.1', step: '0.1', value: '5' });
  const seed = el('input', { id: 'solve-seed', type: 'number', min: '0', step: '1', value: '0' });
  const submit = el('button', { type: 'submit', id: 'solve-submit' }, 'Solve');
  const form = el('form', { class: 'panel', id: 'solve-form' },
    el('div', { class: 'row' }, el('label', {}, 'problem', problem), formats),
    el('label', {}, 'instance', text),
    el('div', { class: 'row' },
      el('label', {}, 'or upload a file', file),
      el('label', {}, 'format', format),
      el('label', {}, 'time limit (s)', timeLimit),
      el('label', {}, 'seed', seed),
      submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { problem: problem.value, options: { time_limit_s: Number(timeLimit.value), seed: Number(seed.value) } };
    let kind = format.value;
    let parsed;
    if (kind !== 'text') {
      try {
        parsed = JSON.parse(text.value);
        kind = 'json';
      } catch (error) {
        if (kind === 'json') return flash(`The instance is not valid JSON: ${error.message}`);
        kind = 'text';
      }
    }
    if (kind === 'json') body.instance = parsed;
    else body.instance_text = text.value;
    submit.disabled = true;
    const job = await guarded(() => post('/v1/solve/jobs', body));
    submit.disabled = false;
    if (job) location.hash = `#/solve/${job.id}`;
  });
  const table = el('div', {}, solveTable(jobs));
  poll(ctx, async () => table.replaceChildren(solveTable(await api('/v1/solve/jobs?limit=100'))));
  ctx.mount(el('h1', {}, 'Solve'), form, el('h2', {}, 'Solve jobs'), table);
}

// A solution: a vector of numbers on wrapped lines (a spin or side per entry), anything else as JSON.
function answer(solution) {
  if (Array.isArray(solution) && solution.every((x) => typeof x === 'number')) {
    return el('pre', { style: 'white-space: pre-wrap; word-break: break-all' }, `${solution.length} entries: ${JSON.stringify(solution)}`);
  }
  return json(solution);
}

async function solveJob(ctx, id) {
  const path = `/v1/solve/jobs/${encodeURIComponent(id)}`;
  let job = await api(path);
  const chart = lineChart({ title: 'Incumbent over time', xLabel: 'elapsed (ms)', yLabel: 'objective', stepped: true, testId: 'incumbent-chart' });
  ctx.cleanups.push(chart.destroy);
  const factsBox = el('div');
  const resultBox = el('div', { 'data-testid': 'solve-result' });
  const cancel = cancelButton('cancel-job', path, (updated) => update(updated));
  const update = (changes) => {
    job = { ...job, ...changes };
    const result = job.result || {};
    const latest = job.latest || {};
    cancel.disabled = TERMINAL.includes(job.state);
    factsBox.replaceChildren(facts([
      ['state', badge(job.state)],
      ['problem', job.request.problem],
      ['objective', el('span', { 'data-testid': 'objective' }, fmt(result.objective ?? latest.objective, 10))],
      ['status', result.status || '–'],
      ['elapsed', result.elapsed_ms !== undefined ? `${fmt(result.elapsed_ms / 1000)} s` : '–'],
      ['rounds · chains · device', result.rounds !== undefined ? `${fmt(result.rounds)} · ${fmt(result.chains)} · ${result.device}` : '–'],
      ['seed', fmt(result.seed ?? (job.request.options || {}).seed)],
      ['created', when(job.created_at)],
      ['error', job.error || '–'],
    ]));
    if (job.result) {
      for (const point of job.result.history || []) chart.add(point.elapsed_ms, point.objective);
      // The line runs to the end of the search, not only to its last improvement.
      if (Number.isFinite(job.result.elapsed_ms)) chart.add(job.result.elapsed_ms, job.result.objective);
      resultBox.replaceChildren(el('h2', {}, 'Answer'), answer(job.result.solution));
    }
    chart.draw();
  };
  ctx.mount(el('h1', {}, 'Solve job ', el('code', {}, id)), factsBox, el('div', { class: 'actions' }, cancel), chart.node, resultBox,
    el('h2', {}, 'Request'), json({ ...job.request, instance: job.request.instance ? '(JSON instance)' : undefined, instance_text: job.request.instance_text ? `(${job.request.instance_text.length} characters)` : undefined }));
  update({});
  // On every (re)connection: the job's row and its whole curve, then its events.
  const resync = async () => {
    update(await api(path));
    for (const point of await api(`${path}/incumbents`)) chart.add(point.elapsed_ms, point.objective);
    chart.draw();
  };
  await follow(ctx, path, resync, () => TERMINAL.includes(job.state), async (event, data) => {
    if (event === 'incumbent') {
      chart.add(data.elapsed_ms, data.objective);
      update({ latest: data });
    } else if (event === 'state') {
      update(TERMINAL.includes(data.state) ? await api(path) : data);
    }
  });
}

// ---- Training -------------------------------------------------------------------------------
async function trainingList(ctx) {
  const [algorithms, envs, jobs] = await Promise.all([api('/v1/algorithms'), api('/v1/envs'), api('/v1/training/jobs?limit=100')]);
  const algorithm = el('select', { id: 'train-algorithm' }, algorithms.map((a) => el('option', { value: a.name, selected: a.name === 'ppo_discrete' }, a.name)));
  const env = el('select', { id: 'train-env' });
  const fillEnvs = () => {
    const info = algorithms.find((a) => a.name === algorithm.value) || {};
    // Only the envs this algorithm takes: same agent count kind, an action space it handles.
    const kinds = String(info.action_space || '').split('|');
    const fits = envs.filter((e) => Boolean(e.multi_agent) === Boolean(info.multi_agent) && kinds.includes((e.action_space || {}).kind));
    const keep = env.value;
    env.replaceChildren(...fits.map((e) => el('option', { value: e.id, selected: e.id === keep || (!keep && e.id === 'CartPole-v1') }, e.id)));
  };
  algorithm.addEventListener('change', fillEnvs);
  fillEnvs();
  const steps = el('input', { id: 'train-steps', type: 'number', min: '1', value: '20000' });
  const every = el('input', { id: 'train-eval-every', type: 'number', min: '1', placeholder: 'a tenth' });
  const seed = el('input', { id: 'train-seed', type: 'number', min: '0', value: '0' });
  const hyper = el('textarea', { id: 'train-hyperparameters', style: 'min-height:4rem', placeholder: '{"learning_rate": 0.0003}  (optional; see GET /v1/algorithms)' });
  const submit = el('button', { type: 'submit', id: 'train-submit' }, 'Start training');
  const form = el('form', { class: 'panel', id: 'train-form' },
    el('div', { class: 'row' },
      el('label', {}, 'algorithm', algorithm), el('label', {}, 'environment', env),
      el('label', {}, 'env steps', steps), el('label', {}, 'evaluate every', every), el('label', {}, 'seed', seed)),
    el('label', {}, 'hyperparameters (JSON)', hyper),
    el('div', { class: 'row' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { algorithm: algorithm.value, env: env.value, total_steps: Number(steps.value), seed: Number(seed.value) };
    if (every.value) body.eval_every = Number(every.value);
    if (hyper.value.trim()) {
      try {
        body.hyperparameters = JSON.parse(hyper.value);
      } catch (error) {
        return flash(`hyperparameters: not valid JSON: ${error.message}`);
      }
    }
    submit.disabled = true;
    const job = await guarded(() => post('/v1/training/jobs', body));
    submit.disabled = false;
    if (job) location.hash = `#/training/${job.id}`;
  });
  const table = el('div', {}, trainingTable(jobs));
  poll(ctx, async () => table.replaceChildren(trainingTable(await api('/v1/training/jobs?limit=100'))));
  ctx.mount(el('h1', {}, 'Training'), form, el('h2', {}, 'Training jobs'), table);
}

async function trainingJob(ctx, id) {
  const path = `/v1/training/jobs/${encodeURIComponent(id)}`;
  let job = await api(path);
  const chart = lineChart({ title: 'Evaluation return (mean over episodes)', xLabel: 'env steps', yLabel: 'return', testId: 'learning-curve' });
  ctx.cleanups.push(chart.destroy);
  const factsBox = el('div');
  const artifactsBox = el('div');
  const cancel = cancelButton('cancel-job', path, (updated) => update(updated));
  const progress = el('progress', { max: String(job.request.total_steps), value: String(job.steps) });
  const update = (changes) => {
    job = { ...job, ...changes };
    const latest = job.latest || {};
    cancel.disabled = TERMINAL.includes(job.state);
    progress.value = job.steps;
    factsBox.replaceChildren(facts([
      ['state', badge(job.state)],
      ['run', `${job.request.algorithm} on ${job.request.env}, seed ${job.request.seed || 0}`],
      ['env steps', el('span', {}, el('span', { 'data-testid': 'steps' }, fmt(job.steps)), ` / ${fmt(job.request.total_steps)} `, progress)],
      ['latest evaluation', latest.return_mean !== undefined ? `${fmt(latest.return_mean)} ± ${fmt(latest.return_std, 3)} at step ${fmt(latest.step)}` : '–'],
      ['speed', latest.steps_per_s !== undefined ? `${fmt(latest.steps_per_s, 3)} steps/s` : '–'],
      ['created · started · finished', `${when(job.created_at)} · ${when(job.started_at)} · ${when(job.finished_at)}`],
      ['restarts · runner', `${fmt(job.restarts)} · ${job.runner || '–'}`],
      ['outcome', job.result ? JSON.stringify(job.result) : job.error || '–'],
    ]));
    artifactsBox.replaceChildren(job.artifacts && job.artifacts.length
      ? el('ul', { 'data-testid': 'artifacts' }, job.artifacts.map((name) => el('li', {}, el('a', { href: '#', onclick: (e) => { e.preventDefault(); guarded(() => download(`${path}/artifacts/${encodeURIComponent(name)}`, name)); } }, name))))
      : el('p', { class: 'muted' }, 'None yet (the first checkpoint comes with the first evaluation).'));
  };
  const addPoint = (point) => chart.add(point.step, point.return_mean);
  ctx.mount(el('h1', {}, 'Training job ', el('code', {}, id)), factsBox, el('div', { class: 'actions' }, cancel), chart.node,
    el('h2', {}, 'Artifacts'), artifactsBox, el('h2', {}, 'Request'), json(job.request));
  update({});
  const resync = async () => {
    update(await api(path));
    (await api(`${path}/metrics`)).forEach(addPoint);
    chart.draw();
  };
  await follow(ctx, path, resync, () => TERMINAL.includes(job.state), async (event, data) => {
    if (event === 'evaluation') {
      addPoint(data);
      chart.draw();
      update({ latest: data, steps: Math.max(job.steps, data.step) });
    } else if (event === 'progress') {
      update({ steps: data.steps });
    } else if (event === 'state') {
      // The job's row carries what the event leaves out (artifacts, times, the outcome).
      update(await api(path));
    }
  });
}

// ---- Populations ----------------------------------------------------------------------------
async function populationList(ctx) {
  const table = el('div', {}, populationTable(await api('/v1/populations')));
  poll(ctx, async () => table.replaceChildren(populationTable(await api('/v1/populations'))));
  ctx.mount(el('h1', {}, 'Populations'), table, el('p', { class: 'hint' }, 'Start one with POST /v1/populations (see the API docs).'));
}

async function population(ctx, id) {
  const path = `/v1/populations/${encodeURIComponent(id)}`;
  const p = await api(path);
  const cancel = cancelButton('cancel-population', path, render);
  cancel.disabled = TERMINAL.includes(p.state);
  const chart = lineChart({ title: 'Best evaluated score by env steps', xLabel: 'env steps per member', yLabel: 'score', testId: 'population-chart' });
  ctx.cleanups.push(chart.destroy);
  const best = new Map();
  for (const entry of p.leaderboard) best.set(entry.steps, Math.max(best.get(entry.steps) ?? -Infinity, entry.score));
  for (const [steps, score] of best) chart.add(steps, score);
  const entryRows = (entries, testId) => el('table', { 'data-testid': testId },
    el('thead', {}, el('tr', {}, ['member', 'round', 'steps', 'score', 'origin', 'hyperparameters'].map((h) => el('th', {}, h)))),
    el('tbody', {}, entries.map((e) => el('tr', {},
      el('td', { class: 'num' }, e.member), el('td', { class: 'num' }, e.round), el('td', { class: 'num' }, fmt(e.steps)),
      el('td', { class: 'num' }, `${fmt(e.score)} ± ${fmt(e.score_std, 3)}`), el('td', {}, e.origin.action || ''),
      el('td', {}, JSON.stringify(e.hyperparameters))))));
  ctx.mount(el('h1', {}, 'Population ', el('code', {}, id)),
    facts([['state', badge(p.state)], ['run', `${p.request.scheme || ''} ${p.request.algorithm} on ${p.request.env}`], ['rounds', `${fmt(p.rounds_done)} done of ${fmt(p.rounds_total)}`], ['jobs', JSON.stringify(p.jobs)], ['error', p.error || '–']]),
    el('div', { class: 'actions' }, cancel), chart.node,
    el('h2', {}, 'Members (latest round each)'), entryRows(p.members, 'members'),
    el('h2', {}, 'Leaderboard'), entryRows(p.leaderboard.slice(0, 50), 'leaderboard'),
    el('h2', {}, 'Request'), json(p.request));
  chart.draw();
  if (!TERMINAL.includes(p.state)) {
    const timer = setTimeout(() => location.hash.endsWith(id) && render(), 3000);
    ctx.cleanups.push(() => clearTimeout(timer));
  }
}

// ---- Models ---------------------------------------------------------------------------------
async function modelList(ctx) {
  const list = await api('/v1/models');
  ctx.mount(el('h1', {}, 'Models'),
    el('table', { 'data-testid': 'models' },
      el('thead', {}, el('tr', {}, ['name', 'problem', 'trained by', 'owner', 'sha256'].map((h) => el('th', {}, h)))),
      el('tbody', {}, list.models.map((m) => el('tr', {},
        el('td', {}, el('a', { href: `#/models/${encodeURIComponent(m.name)}` }, m.name)),
        el('td', {}, m.problem),
        el('td', {}, el('code', {}, (m.training && m.training.command) || '')),
        el('td', {}, m.owner || 'shipped'),
        el('td', {}, el('code', {}, m.sha256.slice(0, 12))))))),
    list.rejected.length ? [el('h2', {}, 'Refused at start'), json(list.rejected)] : []);
}

// Every curve a manifest's metrics hold: [[x, y], ...], [y, ...] or [{step, return_mean}, ...].
function manifestCurves(metrics) {
  const curves = [];
  for (const [name, value] of Object.entries(metrics || {})) {
    if (!Array.isArray(value) || value.length < 2) continue;
    let points = null;
    if (value.every((p) => Array.isArray(p) && p.length >= 2)) points = value.map((p) => [p[0], p[1]]);
    else if (value.every((p) => typeof p === 'number')) points = value.map((y, i) => [i, y]);
    else if (value.every((p) => p && typeof p === 'object' && 'step' in p && 'return_mean' in p)) points = value.map((p) => [p.step, p.return_mean]);
    if (points) curves.push([name, points]);
  }
  return curves;
}

async function model(ctx, name) {
  const manifest = await api(`/v1/models/${encodeURIComponent(name)}`);
  const charts = manifestCurves(manifest.metrics).map(([metric, points]) => {
    const chart = lineChart({ title: metric, xLabel: 'training step', yLabel: metric, testId: `model-curve-${metric}` });
    points.forEach(([x, y]) => chart.add(x, y));
    ctx.cleanups.push(chart.destroy);
    return chart;
  });
  const scalars = Object.entries(manifest.metrics || {}).filter(([, v]) => typeof v !== 'object' || v === null || !Array.isArray(v) || !manifestCurves({ v }).length);
  ctx.mount(el('h1', {}, 'Model ', el('code', {}, name)),
    facts([['problem', manifest.problem], ['owner', manifest.owner || 'shipped with the service'], ['trained by', el('code', {}, (manifest.training && manifest.training.command) || JSON.stringify(manifest.training))], ['training data', manifest.training_data], ['sha256', el('code', {}, manifest.sha256)]]),
    el('h2', {}, 'Training metrics'), charts.map((c) => c.node), json(Object.fromEntries(scalars)),
    el('h2', {}, 'Manifest'), json(manifest));
  charts.forEach((c) => c.draw());
}

// ---- Start ----------------------------------------------------------------------------------
window.addEventListener('hashchange', render);
showKeyState();
render();
