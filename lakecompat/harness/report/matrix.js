// matrix.html: the details of every cell, decoded from one compact data block on demand.
const DATA = JSON.parse(document.getElementById('data').textContent);
const S = DATA.strings;
const FIELDS = DATA.fields;
const COLOURS = DATA.colours;
const REPRO = DATA.repro;

function cell(i) {
  const row = DATA.cells[i], c = {index: i};
  FIELDS.forEach((name, n) => { c[name] = name === 'seconds' ? row[n] : S[row[n]]; });
  const scenario = DATA.scenarios[row[FIELDS.indexOf('scenario')]];
  c.scenario = scenario[0]; c.title = scenario[1]; c.category = scenario[2];
  // The query type, and the query shape where it is not SELECT * (`snapshot filter`).
  c.query = c.shape && c.shape !== 'all' ? c.query_type + ' ' + c.shape : c.query_type;
  // The table type, after the table format where it is not Hudi (`iceberg mor`).
  c.format = c.format || 'hudi';
  c.kind = c.format === 'hudi' ? c.table_type : c.format + ' ' + c.table_type;
  c.id = c.engine + '.' + c.kind.replace(' ', '.') + '.' + c.query.replace(' ', '.') + '.'
    + c.scenario + '[' + c.variant + ']';
  return c;
}
const ALL = DATA.cells.map((_, i) => cell(i));
const byPlace = {};
ALL.forEach(c => { (byPlace[c.engine + '|' + c.scenario + '|' + c.format] ||= []).push(c); });
// The table format of an overview's cell: its section's.
const formatOf = element => (element.closest('section.overview') || {dataset: {}}).dataset.format
  || 'hudi';
const defaultOf = (format, engine) => (DATA.defaults[format] || {})[engine];
const TABLE_TYPES = DATA.table_types;

function marks(c) {
  return c.verdict === 'regression' ? ' ⚠' : c.verdict === 'fixed upstream' ? ' ✓' : '';
}
function cssOf(c) {
  return c.verdict === 'regression' ? 'cell regression'
    : c.verdict === 'fixed upstream' ? 'cell fixed' : 'cell';
}
// Words of a reason: its `code` spans as code.
function words(text) {
  return esc(text).split('`').map((part, n) => n % 2 ? '<code>' + part + '</code>' : part).join('');
}
// A variant's name that may wrap after its `_` and `+` (a narrow panel's column heading).
function breakable(name) { return esc(name).replace(/[_+]/g, '$&<wbr>'); }

function td(c) {
  return '<td class="' + cssOf(c) + '" data-id="' + esc(c.id) + '" data-outcome="' + c.outcome
    + '" data-verdict="' + esc(c.verdict) + '" style="background:' + COLOURS[c.outcome]
    + '" title="' + esc(c.reason) + '" onclick="showCell(' + c.index + ', this)">' + c.outcome
    + marks(c) + '</td>';
}

let selected = null;
// What the panel shows, and what it showed before a cell of its own table was clicked.
let showing = '', previous = '';
function fillPanel(html) {
  showing = html;
  document.getElementById('details').innerHTML = '<p class="close">'
    + (previous ? '<a href="#" id="back-details" onclick="goBack();return false">← back</a> · '
      : '')
    + '<a href="#" id="close-details" onclick="closePanel();return false">close ✕</a> (or Esc)'
    + '</p>' + html;
}
function goBack() {
  const html = previous;
  previous = '';
  fillPanel(html);
}
// The panel lies over one side of the window, the side away from the clicked element, so that
// opening it moves nothing on the page and leaves what was clicked in sight.
function openPanel(html, element) {
  const panel = document.getElementById('details');
  // A cell of the panel's own table keeps the panel where it is, and the page's cell chosen.
  const inPanel = Boolean(element) && panel.contains(element);
  previous = inPanel ? showing : '';
  fillPanel(html);
  document.body.classList.add('panel-open');
  if (!inPanel) {
    if (selected) selected.classList.remove('selected');
    selected = element || null;
  }
  if (selected) {
    selected.classList.add('selected');
    const box = selected.getBoundingClientRect(), width = panel.offsetWidth;
    const underRight = Math.max(0, box.right - (window.innerWidth - width));
    const underLeft = Math.max(0, width - box.left);
    panel.classList.toggle('left', underLeft < underRight);
  }
  panel.scrollTop = 0;
}
function closePanel() {
  document.body.classList.remove('panel-open');
  if (selected) selected.classList.remove('selected');
  selected = null;
}

function showCell(i, element) {
  const c = ALL[i];
  let t = '<b id="detail-outcome">' + esc(c.outcome) + '</b> <span id="detail-id">' + esc(c.id)
    + '</span><p>' + esc(c.title) + ' · ' + esc(c.engine) + ' ' + esc(c.engine_version)
    + (c.reader_hudi ? ' (Hudi ' + esc(c.reader_hudi) + ' jars)' : '') + '</p><p>Verdict: <b>'
    + esc(c.verdict) + '</b> (expected ' + esc(c.expected) + ')</p>';
  if (c.reason) t += '<p id="detail-reason">' + words(c.reason) + '</p>';
  if (c.known_reason) {
    t += '<p>Known: ' + words(c.known_reason);
    if (c.known_link) t += ' <a href="' + esc(c.known_link) + '">' + esc(c.known_link) + '</a>';
    t += '</p>';
  }
  if (c.sql) t += '<h4>What ran</h4><pre id="detail-sql">' + esc(c.sql) + '</pre>';
  if (c.sample) t += '<h4>Diff sample</h4><pre>' + esc(c.sample) + '</pre>';
  if (c.error) t += '<h4>Error</h4><pre id="detail-error">' + esc(c.error) + '</pre>';
  const source = {written: ' (the table was written by this run)',
    cache: ' (the table was read from the table cache: written by an earlier run with the same '
      + 'writer, scenario and table type)'}[c.table_from] || '';
  if (c.files) {
    t += '<h4>Table files' + esc(source) + '</h4><pre id="detail-files">' + esc(c.files) + '</pre>';
  }
  if (c.log) t += '<h4>Engine log</h4><pre>' + esc(c.log) + '</pre>';
  if (c.outcome === 'WRONG' || c.outcome === 'ERROR') {
    t += '<h4>Reproduce without lakecompat</h4><p>A folder with the writer as a PySpark script, '
      + 'the SQL of the engine and an ISSUE.md draft:</p><pre id="detail-repro">'
      + esc(REPRO + " '" + c.id + "'") + '</pre>';
  }
  openPanel(t, element);
}

// An overview cell: what it sums up, and every cell behind it (each variant, table and query
// type), each one click from its evidence.
function showSummary(element) {
  const engine = element.dataset.engine, scenario = element.dataset.scenario;
  const format = formatOf(element);
  const cells = byPlace[engine + '|' + scenario + '|' + format] || [];
  if (!cells.length) return;
  const variants = [...new Set(cells.map(c => c.variant))];
  const places = [...new Set(cells.map(c => c.kind + ' ' + c.query))];
  let t = '<b id="summary-title">' + esc(engine) + ' · ' + esc(cells[0].title) + '</b> (<code>'
    + esc(scenario) + '</code>)<p id="summary-text">' + esc(element.dataset.summary) + '</p>';
  const reasons = JSON.parse(element.dataset.reasons || '[]');
  if (reasons.length) {
    t += '<ul>' + reasons.map(r => '<li>' + words(r) + '</li>').join('') + '</ul>';
  }
  const named = defaultOf(format, engine);
  t += '<div class="wide"><table id="summary-cells"><thead><tr><th>table · query type</th>'
    + variants.map(v => '<th>' + breakable(v)
      + (v === named && v !== 'default' ? ' (default)' : '') + '</th>').join('') + '</tr></thead>';
  const unsupported = places.filter(place => cells.every(
    c => c.kind + ' ' + c.query !== place || c.outcome === 'UNSUPPORTED'));
  places.filter(place => !unsupported.includes(place)).forEach(place => {
    t += '<tr><th>' + esc(place) + '</th>' + variants.map(v => {
      const c = cells.find(x => x.variant === v && x.kind + ' ' + x.query === place);
      return c ? td(c) : '<td></td>';
    }).join('') + '</tr>';
  });
  t += '</table></div><p>Click a cell for its evidence.</p>';
  if (unsupported.length) {
    t += '<p>' + esc(engine) + ' has no ' + esc(unsupported.join(', ')) + ' query (UNSUPPORTED): '
      + 'those cells are under “Every cell, by engine” below, with “show what no engine read” '
      + 'ticked.</p>';
  }
  openPanel(t, element);
}

// The overview shows one table format and one view at a time, as the switch above it says.
function showOverview() {
  const chosen = name => (document.querySelector('input[name=' + name + ']:checked') || {}).value;
  const format = chosen('shown-format'), view = chosen('shown-view') || 'operations';
  document.querySelectorAll('section.overview').forEach(section => {
    section.classList.toggle('hidden', Boolean(format) && section.dataset.format !== format);
    section.querySelectorAll('.view').forEach(v => {
      v.classList.toggle('hidden', v.dataset.view !== view);
    });
  });
}

// The detail tables of one engine, built when its section is first opened.
function buildEngine(section) {
  if (section.dataset.built) return;
  section.dataset.built = '1';
  const engine = section.dataset.engine;
  const mine = ALL.filter(c => c.engine === engine);
  const groups = {};
  mine.forEach(c => { (groups[c.kind + ' · ' + c.query] ||= []).push(c); });
  let html = '';
  Object.entries(groups).forEach(([name, cells]) => {
    const read = cells.filter(c => c.outcome !== 'UNSUPPORTED' && c.outcome !== 'REJECTED');
    if (!read.length) {
      html += '<p class="folded notread">' + esc(engine + ' · ' + name) + ': '
        + esc(cells[0].reason || cells[0].outcome) + '</p>';
    }
    const variants = [...new Set(cells.map(c => c.variant))];
    const rows = {};
    cells.forEach(c => { (rows[c.scenario] ||= {})[c.variant] = c; });
    html += '<section class="matrix' + (read.length ? '' : ' notread') + '" data-engine="'
      + esc(engine) + '" data-shape="' + esc(cells[0].shape || 'all') + '" data-format="'
      + esc(cells[0].format) + '"><h3>' + esc(engine + ' · ' + name) + '</h3><table><thead><tr>'
      + '<th>scenario</th>' + variants.map(v => '<th>' + esc(v) + '</th>').join('')
      + '</tr></thead><tbody>';
    Object.entries(rows).forEach(([scenario, byVariant]) => {
      const row = Object.values(byVariant);
      const outcomes = [...new Set(row.map(c => c.outcome))];
      const notRead = outcomes.every(o => o === 'UNSUPPORTED' || o === 'REJECTED');
      html += '<tr class="scenario' + (notRead ? ' notread' : '') + '" data-category="'
        + esc(row[0].category) + '" data-outcomes="' + outcomes.join(' ') + '" data-verdicts="'
        + esc([...new Set(row.map(c => c.verdict))].join('|')) + '"><td>' + esc(row[0].title)
        + ' (<code>' + esc(scenario) + '</code>)</td>'
        + variants.map(v => byVariant[v] ? td(byVariant[v]) : '<td></td>').join('') + '</tr>';
    });
    html += '</tbody></table></section>';
  });
  section.querySelector('.tables').innerHTML = html;
  filter();
}

function filter() {
  const engines = wanted('engine'), outcomes = wanted('outcome'), categories = wanted('category');
  const verdicts = wanted('verdict'), shapes = wanted('shape'), formats = wanted('format');
  const everything = document.getElementById('show-not-read').checked;
  document.querySelectorAll('details.engine').forEach(s => {
    s.style.display = engines.includes(s.dataset.engine) ? '' : 'none';
  });
  document.querySelectorAll('section.matrix').forEach(s => {
    const shown = shapes.includes(s.dataset.shape)
      && (!formats.length || formats.includes(s.dataset.format));
    s.style.display = shown && (everything || !s.classList.contains('notread')) ? '' : 'none';
  });
  document.querySelectorAll('p.folded.notread').forEach(p => {
    p.style.display = everything ? 'none' : '';
  });
  document.querySelectorAll('tr.scenario').forEach(r => {
    const outs = r.dataset.outcomes.split(' '), verds = r.dataset.verdicts.split('|');
    const show = categories.includes(r.dataset.category) && outs.some(o => outcomes.includes(o))
      && verds.some(v => verdicts.includes(v)) && (everything || !r.classList.contains('notread'));
    r.style.display = show ? '' : 'none';
  });
}

function openAll() {
  document.querySelectorAll('details.engine').forEach(d => { d.open = true; buildEngine(d); });
}

document.querySelectorAll('.filters input, #show-not-read').forEach(
  i => i.addEventListener('change', filter));
document.querySelectorAll('details.engine').forEach(
  d => d.addEventListener('toggle', () => { if (d.open) buildEngine(d); }));
document.querySelectorAll('#overview-switch input').forEach(
  i => i.addEventListener('change', showOverview));
showOverview();  // a reloaded page keeps the choice it had
document.addEventListener('keydown', e => { if (e.key === 'Escape') closePanel(); });

// The writer's overview cell: whether it accepted the change, and what it said when it refused.
function showWriter(element) {
  const scenario = element.dataset.scenario, format = formatOf(element);
  const cells = ALL.filter(c => c.scenario === scenario && c.format === format);
  if (!cells.length) return;
  let t = '<b id="summary-title">writer · ' + esc(cells[0].title) + '</b> (<code>'
    + esc(scenario) + '</code>)<p id="summary-text">' + esc(element.dataset.summary) + '</p>';
  const shown = new Set();
  cells.forEach(c => {
    if (shown.has(c.table_type)) return;
    shown.add(c.table_type);
    t += '<h4>' + esc(TABLE_TYPES[c.table_type] || c.table_type) + ' table (' + esc(c.kind)
      + ')</h4>';
    if (c.outcome === 'REJECTED') {
      t += '<p>' + words(c.reason) + '</p>';
      if (c.sql) t += '<pre>' + esc(c.sql) + '</pre>';
      if (c.error) t += '<pre>' + esc(c.error) + '</pre>';
    } else if (c.files) {
      t += '<p>Accepted. The table\'s live files:</p><pre>' + esc(c.files) + '</pre>';
    }
  });
  openPanel(t, element);
}
