// Small SVG line charts for the ops dashboard, drawn by hand (no library): a sparkline for a job's
// rate and a chart of several series over the last hour. Each chart is an image to assistive
// technology, labelled with what it shows and its latest values; gaps (null) break the line.
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';

function svgEl(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

/** The known values (null is a gap) as points scaled into the box. */
function chartPoints(values, box, max) {
  const n = values.length;
  return values.map((v, i) => {
    if (v === null || v === undefined) return null;
    const x = box.left + (n === 1 ? box.width : (i / (n - 1)) * box.width);
    const y = box.top + box.height - (max > 0 ? (v / max) * box.height : 0);
    return { x: x.toFixed(1), y: y.toFixed(1) };
  });
}

/** A path through the points; a gap lifts the pen. */
function linePath(points) {
  let d = '';
  let pen = false;
  for (const p of points) {
    if (p) d += `${pen ? 'L' : 'M'}${p.x} ${p.y} `;
    pen = p !== null;
  }
  return d.trim();
}

/** The top of the y axis: the largest value rounded up to 1, 2 or 5 times a power of ten. */
function niceMax(values) {
  const max = Math.max(0, ...values.filter((v) => typeof v === 'number'));
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= max);
}

function formatNumber(v) {
  if (v === null || v === undefined) return '–';
  return v >= 100 ? String(Math.round(v)) : String(Number(v.toPrecision(2)));
}

/**
 * A sparkline of one job's rate: one point per progress record. `label` names the job.
 */
function rateSparkline(points, label) {
  const width = 120;
  const height = 32;
  const values = points.map((p) => p.rate);
  const max = niceMax(values);
  const last = values.at(-1);
  const title = `${label}: ${formatNumber(last)} files/s now, peak ${formatNumber(Math.max(0, ...values))} files/s, ${values.length} samples`;
  return svgEl('svg', { class: 'sparkline', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title, 'data-points': values.length },
    svgEl('title', {}, title),
    svgEl('path', { class: 'line', d: linePath(chartPoints(values, { left: 1, top: 2, width: width - 2, height: height - 4 }, max)) }));
}

/**
 * A chart of `series` ({ name, cls, values }) over `labels` (oldest first), with the y axis in
 * `unit`. `title` names the chart.
 */
function lineChart(title, unit, labels, series) {
  const width = 360;
  const height = 140;
  const box = { left: 44, top: 10, width: width - 54, height: height - 34 };
  const max = niceMax(series.flatMap((s) => s.values));
  const latest = series.map((s) => `${s.name} ${formatNumber(s.values.filter((v) => v !== null).at(-1))} ${unit}`).join(', ');
  const description = `${title}, last ${labels.length} minutes; latest: ${latest}`;
  const grid = [0, 0.5, 1].map((f) => {
    const y = box.top + box.height - f * box.height;
    return svgEl('g', { class: 'grid' }, svgEl('line', { x1: box.left, x2: box.left + box.width, y1: y, y2: y }),
      svgEl('text', { x: box.left - 4, y: y + 4, 'text-anchor': 'end' }, `${formatNumber(f * max)}`));
  });
  const axis = [
    svgEl('text', { class: 'axis', x: box.left, y: height - 6 }, `${labels.length} min ago`),
    svgEl('text', { class: 'axis', x: box.left + box.width, y: height - 6, 'text-anchor': 'end' }, 'now'),
    svgEl('text', { class: 'axis', x: 4, y: box.top - 2 }, unit),
  ];
  // A line per series, and a dot on every minute with calls, so a lone minute shows too.
  const lines = series.map((s) => {
    const points = chartPoints(s.values, box, max);
    return svgEl('g', { class: `series ${s.cls}` },
      svgEl('path', { class: `line ${s.cls}`, 'data-series': s.name, 'data-values': s.values.filter((v) => v !== null).length, d: linePath(points) }),
      ...points.filter((p) => p !== null).map((p) => svgEl('circle', { class: `dot ${s.cls}`, cx: p.x, cy: p.y, r: 2 })));
  });
  const legend = series.map((s, i) =>
    svgEl('text', { class: `legend ${s.cls}`, x: box.left + box.width - 8 - (series.length - 1 - i) * 70, y: box.top + 10, 'text-anchor': 'end' }, s.name)
  );
  return svgEl('svg', { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': description },
    svgEl('title', {}, description), ...grid, ...axis, ...lines, ...legend);
}
