// The attention explorer's script (apps/common/attention_explorer.h writes it into every page).
// It reads the page's data, the JSON in <script id="explorer-data">, and draws every section from
// it: plain JavaScript, no library, nothing fetched.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("explorer-data").textContent);
  const main = document.getElementById("explorer");

  // viridis, the five stops of apps/common/svg_canvas.cpp, for t in [0, 1].
  const STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function viridis(t) {
    t = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * 4;
    const i = Math.min(3, Math.floor(t)), f = t - i, a = STOPS[i], b = STOPS[i + 1];
    return [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * f));
  }
  function rgb(c, alpha) {
    return alpha === undefined ? "rgb(" + c.join(",") + ")"
                               : "rgba(" + c.join(",") + "," + alpha + ")";
  }
  function fmt(w) { return w.toFixed(4); }
  function maxOf(values) { let m = 0; for (const v of values) if (v > m) m = v; return m; }
  function el(tag, parent, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function svgEl(tag, parent, attrs) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    parent.appendChild(e);
    return e;
  }

  // "shared": every panel of a section coloured from 0 to the section's largest weight, so a
  // near-uniform map stays dark beside a sharp one; "panel": each from 0 to its own largest;
  // "absolute": every panel from 0 to 1.
  let scaleMode = "shared";
  const repaints = [];  // called when the scale changes
  function scaleTop(sectionTop, panelValues) {
    if (scaleMode === "absolute") return 1;
    return scaleMode === "shared" ? sectionTop : maxOf(panelValues);
  }

  const IDLE = "Hover over a cell, a token or a patch to read its exact weight.";
  let readout = null;
  function say(text) { readout.textContent = text; }

  function header() {
    el("h1", main, {}, data.title);
    if (data.subtitle) el("p", main, {class: "subtitle"}, data.subtitle);
    const notes = el("section", main, {class: "notes"});
    for (const n of data.notes) el("p", notes, {}, n);
    const controls = el("div", main, {class: "controls"});
    el("span", controls, {}, "Colour scale: ");
    for (const [value, text] of [["shared", "one for every panel of a section"],
                                 ["panel", "each panel its own"], ["absolute", "0 to 1"]]) {
      const label = el("label", controls);
      const input = el("input", label, {type: "radio", name: "scale", value: value});
      input.checked = value === scaleMode;
      label.appendChild(document.createTextNode(" " + text + "  "));
      input.addEventListener("change", () => {
        scaleMode = value;
        for (const repaint of repaints) repaint();
      });
    }
    readout = el("div", main, {id: "readout"}, IDLE);
  }

  // A colour bar with ticks; getTop() is the section's largest weight.
  function legend(parent, getTop) {
    const box = el("div", parent, {class: "legend"});
    const bar = el("canvas", box, {width: 256, height: 12});
    const ctx = bar.getContext("2d");
    for (let x = 0; x < 256; ++x) {
      ctx.fillStyle = rgb(viridis((x + 0.5) / 256));
      ctx.fillRect(x, 0, 1, 12);
    }
    const ticks = el("div", box, {class: "ticks"});
    const caption = el("div", box, {class: "legend-caption"});
    function paint() {
      const panel = scaleMode === "panel", top = scaleMode === "shared" ? getTop() : 1;
      ticks.textContent = "";
      for (let k = 0; k <= 4; ++k)
        el("span", ticks, {},
           panel ? ["0", "", "½ max", "", "max"][k] : (top * k / 4).toPrecision(2));
      caption.textContent = {
        shared: "attention weight, one scale for every panel of this section: 0 to " + fmt(top) +
                    ", the largest weight in them",
        panel: "each panel from 0 (dark) to its own largest weight (bright), stated under it",
        absolute: "attention weight from 0 to 1 in every panel: a colour means the same weight " +
                      "everywhere on the page"}[scaleMode];
    }
    paint();
    repaints.push(paint);
  }

  // Adds the mean of each layer's heads as head h, and the sizes the drawing needs.
  function prepare(f) {
    f.T = f.queries.length, f.S = f.keys.length, f.L = f.weights.length;
    f.h = f.weights[0].length;
    for (const layer of f.weights) {
      const mean = new Array(f.T * f.S).fill(0);
      for (let k = 0; k < f.h; ++k) layer[k].forEach((w, i) => { mean[i] += w / f.h; });
      layer.push(mean);
    }
    f.top = 0;
    for (const layer of f.weights) for (const W of layer) f.top = Math.max(f.top, maxOf(W));
    f.cell = Math.max(2, Math.min(24, Math.floor(192 / Math.max(f.T, f.S))));
    f.draws = [];
    f.hover = null;
  }
  function headName(f, k) { return k === f.h ? "mean of heads" : "head " + (k + 1); }
  function where(f, l, k) { return f.name + ", layer " + (l + 1) + ", " + headName(f, k); }
  // The pointer's position in a canvas's pixels (inside its border).
  function inside(canvas, event) {
    const r = canvas.getBoundingClientRect();
    return [event.clientX - r.left - canvas.clientLeft, event.clientY - r.top - canvas.clientTop];
  }
  function strongest(list) {
    return list.map((w, i) => [w, i]).sort((a, b) => b[0] - a[0]).slice(0, 3);
  }

  // One layer's head (or their mean) as a T × S heatmap; hovering a cell marks it in every panel
  // of the family, each stating its own weight there.
  function mapPanel(f, l, k, grid) {
    const W = f.weights[l][k], c = f.cell;
    const panel = el("div", grid, {class: "panel map-panel", "data-family": f.id,
                                   "data-layer": l, "data-head": k});
    const canvas = el("canvas", panel, {width: f.S * c, height: f.T * c});
    el("div", panel, {class: "caption"}, headName(f, k));
    const value = el("div", panel, {class: "value"});
    const base = document.createElement("canvas");
    base.width = canvas.width, base.height = canvas.height;
    const ctx = canvas.getContext("2d");
    function draw() {
      ctx.drawImage(base, 0, 0);
      const h = f.hover;
      if (h) {
        ctx.strokeStyle = "#e8412c";
        ctx.lineWidth = 2;
        ctx.strokeRect(h.s * c - 1, h.t * c - 1, c + 2, c + 2);
      }
      value.textContent = h ? fmt(W[h.t * f.S + h.s]) : "max " + fmt(maxOf(W));
    }
    function paint() {
      const top = scaleTop(f.top, W), b = base.getContext("2d");
      for (let t = 0; t < f.T; ++t)
        for (let s = 0; s < f.S; ++s) {
          b.fillStyle = rgb(viridis(top > 0 ? W[t * f.S + s] / top : 0));
          b.fillRect(s * c, t * c, c, c);
        }
      draw();
    }
    paint();
    repaints.push(paint);
    f.draws.push(draw);
    canvas.addEventListener("mousemove", (e) => {
      const [x, y] = inside(canvas, e);
      const s = Math.floor(x / c), t = Math.floor(y / c);
      if (t < 0 || t >= f.T || s < 0 || s >= f.S) return;
      if (f.hover && f.hover.t === t && f.hover.s === s) return;
      f.hover = {t: t, s: s};
      for (const d of f.draws) d();
      say(where(f, l, k) + ": query " + (t + 1) + " '" + f.queries[t] + "' -> key " + (s + 1) +
          " '" + f.keys[s] + "': " + fmt(W[t * f.S + s]) +
          "   (every panel states its weight for this cell)");
    });
    canvas.addEventListener("mouseleave", () => {
      f.hover = null;
      for (const d of f.draws) d();
      say(IDLE);
    });
    if (f.token_view) canvas.addEventListener("click", () => f.select(l, k));
  }

  // Queries left, keys right, a line for each weight (bertviz's view), for one layer and head.
  function tokenView(f, section) {
    const ROW = 20, WIDTH = 220;
    const box = el("div", section, {class: "token-view", "data-family": f.id});
    el("h3", box, {}, f.name + ": the tokens, joined by their weights");
    const controls = el("div", box, {class: "token-controls"});
    el("span", controls, {}, "layer ");
    const layerSelect = el("select", controls, {class: "layer-select"});
    for (let l = 0; l < f.L; ++l) el("option", layerSelect, {value: l}, String(l + 1));
    el("span", controls, {}, " head ");
    const headSelect = el("select", controls, {class: "head-select"});
    for (let k = 0; k <= f.h; ++k)
      el("option", headSelect, {value: k}, k === f.h ? "mean of heads" : String(k + 1));
    headSelect.value = String(f.h);
    el("span", controls, {class: "hint"}, "  hover over a token to keep only its lines and read " +
       "its weights; a click on a panel above shows that one");
    const columns = el("div", box, {class: "token-columns"});
    const left = el("div", columns, {class: "token-column queries"});
    el("div", left, {class: "column-head"}, "queries (attending)");
    const middle = el("div", columns, {class: "token-middle"});
    el("div", middle, {class: "column-head"}, " ");
    const svg = svgEl("svg", middle, {width: WIDTH, height: Math.max(f.T, f.S) * ROW});
    const right = el("div", columns, {class: "token-column keys"});
    el("div", right, {class: "column-head"}, "keys (attended to)");
    let focus = null;  // {side: "query" | "key", i}
    function tokens(column, labels, side) {
      return labels.map((label, i) => {
        const row = el("div", column, {class: "token " + side, "data-index": i});
        const weight = el("span", null, {class: "w"});
        const text = el("span", null, {class: "label"}, label);
        if (side === "query") row.append(weight, text); else row.append(text, weight);
        row.addEventListener("mouseenter", () => { focus = {side: side, i: i}; render(); });
        return {row: row, weight: weight};
      });
    }
    const queries = tokens(left, f.queries, "query"), keys = tokens(right, f.keys, "key");
    columns.addEventListener("mouseleave", () => { focus = null; render(); say(IDLE); });

    function render() {
      const l = Number(layerSelect.value), k = Number(headSelect.value), W = f.weights[l][k];
      const top = scaleTop(f.top, W);
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      for (let t = 0; t < f.T; ++t)
        for (let s = 0; s < f.S; ++s) {
          const w = W[t * f.S + s], r = top > 0 ? w / top : 0;
          if (focus && (focus.side === "query" ? focus.i !== t : focus.i !== s)) continue;
          if (r < 0.01) continue;
          svgEl("line", svg, {x1: 0, y1: (t + 0.5) * ROW, x2: WIDTH, y2: (s + 0.5) * ROW,
                              stroke: rgb(viridis(r)), "stroke-width": (1 + 3 * r).toFixed(2),
                              "stroke-opacity": Math.min(1, 0.15 + r).toFixed(2)});
        }
      for (const [list, side] of [[queries, "query"], [keys, "key"]])
        list.forEach((token, i) => {
          let w = null;
          if (focus && focus.side !== side)
            w = side === "key" ? W[focus.i * f.S + i] : W[i * f.S + focus.i];
          token.weight.textContent = w === null ? "" : fmt(w);
          const r = top > 0 ? w / top : 0;
          token.row.style.background = w === null ? "" : rgb(viridis(r), (0.1 + 0.65 * r).toFixed(3));
          token.row.classList.toggle("focus", !!focus && focus.side === side && focus.i === i);
        });
      if (!focus) return;
      const row = focus.side === "query";
      const label = row ? f.queries[focus.i] : f.keys[focus.i];
      const line = row ? W.slice(focus.i * f.S, (focus.i + 1) * f.S)
                       : f.queries.map((_, t) => W[t * f.S + focus.i]);
      const names = row ? f.keys : f.queries;
      say(where(f, l, k) + ": " + (row ? "query '" + label + "' attends most to "
                                       : "key '" + label + "' is attended most by ") +
          strongest(line).map(([w, i]) => "'" + names[i] + "' " + fmt(w)).join(", "));
    }
    f.select = (l, k) => {
      layerSelect.value = String(l), headSelect.value = String(k), focus = null;
      render();
    };
    layerSelect.addEventListener("change", render);
    headSelect.addEventListener("change", render);
    render();
    repaints.push(render);
  }

  function familySection(f) {
    const section = el("section", main, {class: "family", id: "family-" + f.id});
    el("h2", section, {}, f.name + ": every layer and head");
    if (f.about) el("p", section, {class: "about"}, f.about);
    legend(section, () => f.top);
    const grid = el("div", section, {class: "grid"});
    grid.style.gridTemplateColumns = "auto repeat(" + (f.h + 1) + ", auto)";
    for (let l = 0; l < f.L; ++l) {
      el("div", grid, {class: "row-label"}, "layer " + (l + 1));
      for (let k = 0; k <= f.h; ++k) mapPanel(f, l, k, grid);
    }
    if (f.token_view) tokenView(f, section);
  }

  // One query's weights over the image's patches, per layer and head, their mean and the rollout.
  function imageSection(im) {
    const f = data.families.find((x) => x.id === im.family);
    const G = im.grid_rows * im.grid_cols;
    let q = 0;  // which of im.queries is drawn
    function patches(W) {
      const start = im.queries[q] * f.S + im.first_key;
      return W.slice(start, start + G);
    }
    function computeTop() {
      let m = im.rollout ? maxOf(patches(im.rollout)) : 0;
      for (const layer of f.weights) for (const W of layer) m = Math.max(m, maxOf(patches(W)));
      return m;
    }
    let top = computeTop();
    const section = el("section", main, {class: "image-section"});
    el("h2", section, {}, f.name + " over the image: where one token looks");
    const controls = el("div", section, {class: "token-controls"});
    el("span", controls, {}, "the weights of ");
    const querySelect = el("select", controls, {class: "query-select"});
    im.query_names.forEach((name, i) => el("option", querySelect, {value: i}, name));
    el("span", controls, {}, " over the patches, drawn on the image (opacity 0.6)");
    legend(section, () => top);

    // The picture itself, magnified to about 160 pixels.
    const z = Math.max(1, Math.floor(160 / Math.max(im.width, im.height)));
    const picture = document.createElement("canvas");
    picture.width = im.width * z, picture.height = im.height * z;
    const pc = picture.getContext("2d"), HW = im.width * im.height;
    for (let y = 0; y < im.height; ++y)
      for (let x = 0; x < im.width; ++x) {
        const i = y * im.width + x, p = im.pixels;
        pc.fillStyle =
            rgb(im.channels === 3 ? [p[i], p[HW + i], p[2 * HW + i]] : [p[i], p[i], p[i]]);
        pc.fillRect(x * z, y * z, z, z);
      }
    const pw = picture.width / im.grid_cols, ph = picture.height / im.grid_rows;
    const patchName = (n) =>
        "(" + (Math.floor(n / im.grid_cols) + 1) + ", " + (n % im.grid_cols + 1) + ")";
    let hover = null;
    const draws = [];

    function imagePanel(grid, W, name, caption, attrs) {
      const panel = el("div", grid, Object.assign({class: "panel image-panel"}, attrs));
      const canvas = el("canvas", panel, {width: picture.width, height: picture.height});
      el("div", panel, {class: "caption"}, caption);
      const value = el("div", panel, {class: "value"});
      const self = el("div", panel, {class: "self"});
      const ctx = canvas.getContext("2d");
      function draw() {
        const P = patches(W), t = scaleTop(top, P);
        ctx.drawImage(picture, 0, 0);
        ctx.globalAlpha = 0.6;
        for (let n = 0; n < G; ++n) {
          ctx.fillStyle = rgb(viridis(t > 0 ? P[n] / t : 0));
          ctx.fillRect((n % im.grid_cols) * pw, Math.floor(n / im.grid_cols) * ph, pw, ph);
        }
        ctx.globalAlpha = 1;
        if (hover !== null) {
          ctx.strokeStyle = "#e8412c";
          ctx.lineWidth = 2;
          ctx.strokeRect((hover % im.grid_cols) * pw + 1, Math.floor(hover / im.grid_cols) * ph + 1,
                         pw - 2, ph - 2);
        }
        value.textContent = hover !== null ? "patch " + patchName(hover) + ": " + fmt(P[hover])
                                           : "max " + fmt(maxOf(P));
        const on = im.self_key === im.queries[q] ? "itself" : "'" + f.keys[im.self_key] + "'";
        self.textContent = im.self_key >= 0
            ? "on " + on + " " + fmt(W[im.queries[q] * f.S + im.self_key]) : "";
      }
      draw();
      draws.push(draw);
      canvas.addEventListener("mousemove", (e) => {
        const [x, y] = inside(canvas, e);
        const c = Math.floor(x / pw), row = Math.floor(y / ph);
        if (c < 0 || c >= im.grid_cols || row < 0 || row >= im.grid_rows) return;
        if (hover === row * im.grid_cols + c) return;
        hover = row * im.grid_cols + c;
        for (const d of draws) d();
        say(name + ": " + im.query_names[q] + " -> patch " + patchName(hover) + ": " +
            fmt(patches(W)[hover]) + "   (every panel states its weight for this patch)");
      });
      canvas.addEventListener("mouseleave", () => {
        hover = null;
        for (const d of draws) d();
        say(IDLE);
      });
    }

    const grid = el("div", section, {class: "grid"});
    grid.style.gridTemplateColumns = "auto repeat(" + Math.max(2, f.h + 1) + ", auto)";
    el("div", grid, {class: "row-label"}, "input");
    const input = el("div", grid, {class: "panel input-panel"});
    input.appendChild(picture);
    el("div", input, {class: "caption"}, "the image");
    if (im.rollout) {
      imagePanel(grid, im.rollout, "attention rollout", "rollout (all layers)",
                 {"data-rollout": 1});
    }
    for (let k = im.rollout ? 2 : 1; k < Math.max(2, f.h + 1); ++k) el("div", grid);
    for (let l = 0; l < f.L; ++l) {
      el("div", grid, {class: "row-label"}, "layer " + (l + 1));
      for (let k = 0; k <= f.h; ++k)
        imagePanel(grid, f.weights[l][k], where(f, l, k), headName(f, k),
                   {"data-layer": l, "data-head": k});
      for (let k = f.h + 1; k < 2; ++k) el("div", grid);
    }
    const redraw = () => { for (const d of draws) d(); };
    repaints.push(redraw);
    querySelect.addEventListener("change", () => {
      q = Number(querySelect.value);
      top = computeTop();
      for (const repaint of repaints) repaint();
    });
  }

  header();
  for (const f of data.families) prepare(f);
  if (data.image) imageSection(data.image);
  for (const f of data.families) familySection(f);
  document.body.setAttribute("data-ready", "yes");
})();
