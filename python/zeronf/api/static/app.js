// ZeroNF dashboard: polls /api/v1 every second, draws the default chain,
// throughput and drop charts, the NFs with their actions, the flow rules
// and the event log. No library: plain DOM, SVG and canvas.
"use strict";

const API = "api/v1";
const HISTORY = 60;          // seconds kept in the charts
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                "#17becf", "#8c564b", "#e377c2"];
// The token comes in the address's fragment (zeronf api prints
// http://HOST:PORT/#token=...; a fragment is never sent to a server), is
// kept for this tab only and taken out of the address bar.
const fromUrl = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromUrl) {
  sessionStorage.setItem("zeronf-token", fromUrl);
  history.replaceState(null, "", location.pathname + location.search);
}
let token = sessionStorage.getItem("zeronf-token");
let signedOut = !token;      // no calls until the login form gives one
let prev = null;             // the last stats, for rates
const series = {};           // name -> {rx: [], drops: []}
let lastEvent = 0;

// No token, or one the server refused: the login form, once, and no
// more calls (each would be another 401) until it is filled in.
function askToken(refused) {
  signedOut = true;
  const f = document.getElementById("login");
  document.getElementById("login-error").textContent =
    refused ? "The server refused that token." : "";
  if (f.hidden) {
    f.hidden = false;
    f.elements.token.value = "";
    f.elements.token.focus();
  }
}

async function api(path, opts = {}) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  const r = await fetch(`${API}${path}`, { ...opts, headers });
  if (r.status === 401) {
    askToken(Boolean(token));
    throw new Error("signed out: the API wants its token");
  }
  const body = await r.json();
  if (!r.ok) throw new Error(body.error ? body.error.message : r.statusText);
  return body;
}

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

function svgEl(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function showError(msg) {
  const e = document.getElementById("error");
  e.hidden = !msg;
  e.textContent = msg || "";
}

async function act(what, fn) {
  try {
    await fn();
    showError("");
  } catch (err) {
    showError(`${what}: ${err.message}`);
  }
  refresh();
}

const sum = (o) => Object.values(o || {}).reduce((a, b) => a + b, 0);
const perSec = (v) => `${Math.round(v || 0)}/s`;

// The default chain as boxes: the ports in (each with its name and
// packets/s received), each hop (a service shows its running NFs and
// their packets/s; a port its name and packets/s sent), the end.
function drawChain(st, launched, rates) {
  const svg = document.getElementById("chain");
  svg.replaceChildren();
  const names = {};
  for (const l of launched) names[l.service] = l.name;
  const hops = ["in", ...st.status.chain];
  const w = 150, h = 90, gap = 40;
  hops.forEach((hop, i) => {
    const x = 10 + i * (w + gap);
    const g = svgEl("g", { "data-testid": "chain-hop", "data-hop": hop });
    g.append(svgEl("rect", { x, y: 20, width: w, height: h, rx: 8,
                             fill: "#eef3fb", stroke: "#5577aa" }));
    let label = hop, lines = [];
    if (i === 0) {
      label = "in";
      lines = st.ports.map((p) =>
        `${p.name}: ${perSec(rates.ports[p.port]?.rx)}`);
    } else if (hop.startsWith("port:")) {
      const p = st.ports[Number(hop.slice(5))];
      if (p) {
        label = `${hop} ${p.name}`;
        lines = [`out: ${perSec(rates.ports[p.port]?.tx)}`];
      }
    } else if (hop.startsWith("svc:")) {
      const id = Number(hop.slice(4));
      label = `${hop} ${names[id] || ""}`;
      lines = st.nfs.filter((n) => n.service === id).map(
        (n) => `${n.name}: ${perSec(rates[n.instance])}`);
      if (!lines.length) lines = ["(no NF)"];
    }
    g.append(svgEl("text", { x: x + 8, y: 40, "font-weight": "bold" },
                   label));
    lines.slice(0, 4).forEach((t, k) =>
      g.append(svgEl("text", { x: x + 8, y: 58 + 14 * k }, t)));
    if (i > 0)
      g.append(svgEl("line", { x1: x - gap, y1: 65, x2: x, y2: 65,
                               stroke: "#5577aa", "marker-end": "url(#a)" }));
    svg.append(g);
  });
  const defs = svgEl("defs", {});
  const m = svgEl("marker", { id: "a", markerWidth: 8, markerHeight: 8,
                              refX: 8, refY: 4, orient: "auto" });
  m.append(svgEl("path", { d: "M0,0 L8,4 L0,8 z", fill: "#5577aa" }));
  defs.append(m);
  svg.append(defs);
  svg.setAttribute("width", 20 + hops.length * (w + gap));
}

function drawChart(id, key) {
  const c = document.getElementById(id), g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  const names = Object.keys(series);
  const max = Math.max(1, ...names.flatMap((n) => series[n][key]));
  g.fillStyle = "#666";
  g.fillText(Math.round(max).toString(), 4, 12);
  names.forEach((n, k) => {
    const s = series[n][key];
    g.strokeStyle = COLORS[k % COLORS.length];
    g.beginPath();
    s.forEach((v, i) => {
      const x = c.width - (s.length - 1 - i) * (c.width / HISTORY);
      const y = c.height - 4 - (v / max) * (c.height - 20);
      if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
    });
    g.stroke();
  });
  document.getElementById("legend").replaceChildren(...names.map(
    (n, k) => el("span", { style: `color:${COLORS[k % COLORS.length]}` },
                 "\u25A0 " + n)));
}

function push(name, key, v) {
  series[name] ??= { rx: [], drops: [] };
  const s = series[name][key];
  s.push(v);
  if (s.length > HISTORY) s.shift();
}

function renderNfs(st, rates) {
  document.getElementById("nfs").replaceChildren(...st.nfs.map((n) => {
    const ring = n.rx_ring ? `${n.rx_ring.count}/${n.rx_ring.size}` : "";
    return el("tr", { "data-testid": "nf", "data-name": n.name },
      el("td", {}, String(n.instance)), el("td", {}, n.name),
      el("td", {}, String(n.service)),
      el("td", { class: n.state }, n.state),
      el("td", { "data-testid": "nf-rx" }, String(n.rx)),
      el("td", {}, String(Math.round(rates[n.instance] || 0))),
      el("td", {}, String(n.tx)), el("td", {}, String(sum(n.drops))),
      el("td", {}, ring),
      el("td", {}, el("button", {
        "data-testid": "nf-stop", onclick: () => act("stop " + n.name,
          () => api(`/nfs/${n.instance}`, { method: "DELETE" })) },
        "Stop")));
  }));
}

function renderLaunched(launched) {
  document.getElementById("launched").replaceChildren(...launched.map(
    (l) => el("tr", { "data-testid": "launched-nf", "data-name": l.name },
      el("td", {}, l.name), el("td", {}, String(l.service)),
      el("td", { "data-testid": "replicas" }, String(l.replicas)),
      el("td", {}, String(l.running)), el("td", {}, String(l.restarts)),
      el("td", {}, l.sandbox ? "yes" : "no"),
      el("td", {},
        el("button", { "data-testid": "scale-up", onclick: () =>
          act("scale " + l.name, () => api(`/launched/${l.name}/scale`, {
            method: "POST",
            body: JSON.stringify({ replicas: l.replicas + 1 }) })) }, "+1"),
        el("button", { "data-testid": "scale-down", onclick: () =>
          act("scale " + l.name, () => api(`/launched/${l.name}/scale`, {
            method: "POST",
            body: JSON.stringify({ replicas: Math.max(0, l.replicas - 1) })
          })) }, "\u22121"),
        el("button", { "data-testid": "restart", onclick: () =>
          act("restart " + l.name, () => api(`/launched/${l.name}/restart`,
            { method: "POST" })) }, "Restart"),
        el("button", { "data-testid": "remove", onclick: () =>
          act("stop " + l.name, () => api(`/launched/${l.name}`,
            { method: "DELETE" })) }, "Stop")))));
}

function renderRules(rules, flows) {
  document.getElementById("rules").replaceChildren(...rules.map((r) =>
    el("tr", { "data-testid": "rule" },
      el("td", {}, String(r.id)), el("td", {}, String(r.priority)),
      el("td", {}, JSON.stringify(r.match)), el("td", {}, r.chain.join(",")),
      el("td", {}, el("button", { onclick: () => act("delete rule",
        () => api(`/rules/${r.id}`, { method: "DELETE" })) }, "Delete")))));
  document.getElementById("flows").textContent =
    `${flows.count} exact flow rules (capacity ${flows.capacity})`;
}

async function renderEvents() {
  const r = await api(`/events?since=${lastEvent}`);
  const ol = document.getElementById("events");
  for (const e of r.events) {
    const t = new Date(e.time_ms).toLocaleTimeString();
    ol.prepend(el("li", { "data-testid": "event", "data-type": e.type },
                  `${t} ${e.type} ${e.message}`));
    lastEvent = e.seq;
  }
  while (ol.children.length > 50) ol.lastChild.remove();
}

async function refresh() {
  if (signedOut) return;
  try {
    const [st, la, rules, flows] = await Promise.all([
      api("/stats"), api("/launched"), api("/rules"),
      api("/flows?limit=0")]);
    const now = performance.now() / 1000;
    const dt = prev ? now - prev.t : 0;
    const rates = {};
    for (const n of st.nfs) {
      const p = prev && prev.nfs[n.instance];
      rates[n.instance] = p && dt > 0 ? (n.rx - p.rx) / dt : 0;
      push(n.name, "rx", rates[n.instance]);
      push(n.name, "drops", p && dt > 0 ? (sum(n.drops) - p.drops) / dt : 0);
    }
    rates.ports = {};
    for (const p of st.ports) {
      const q = prev && prev.ports[p.port];
      rates.ports[p.port] = q && dt > 0 ?
        { rx: (p.rx - q.rx) / dt, tx: (p.tx - q.tx) / dt } : { rx: 0, tx: 0 };
    }
    const portDrops = st.ports.reduce((a, p) => a + sum(p.drops), 0);
    if (prev && dt > 0) push("ports", "drops", (portDrops - prev.portDrops) / dt);
    prev = { t: now, portDrops, nfs: Object.fromEntries(st.nfs.map(
      (n) => [n.instance, { rx: n.rx, drops: sum(n.drops) }])),
      ports: Object.fromEntries(st.ports.map(
        (p) => [p.port, { rx: p.rx, tx: p.tx }])) };
    const s = st.status;
    document.getElementById("instance").textContent = s.instance;
    document.getElementById("summary").textContent =
      `${st.nfs.length} NFs, ${st.ports.length} ports, RX ` +
      `${s.rx_enabled ? "on" : "paused"}, buffers in use ` +
      `${s.pool.in_use}/${s.pool.size}, drops ${sum(st.drops)}`;
    drawChain(st, la.launched, rates);
    drawChart("tput", "rx");
    drawChart("drops", "drops");
    renderNfs(st, rates);
    renderLaunched(la.launched);
    renderRules(rules, flows);
    await renderEvents();
  } catch (err) {
    showError(err.message);
  }
}

document.getElementById("start").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  act("start", () => api("/launched", { method: "POST", body: JSON.stringify({
    name: f.get("name"), binary: f.get("binary"),
    service: Number(f.get("service")), replicas: Number(f.get("replicas")),
    sandbox: f.get("sandbox") === "on" }) }));
});

document.getElementById("login").addEventListener("submit", (ev) => {
  ev.preventDefault();
  token = ev.target.elements.token.value.trim();
  sessionStorage.setItem("zeronf-token", token);
  ev.target.hidden = true;
  signedOut = false;
  showError("");
  refresh();
});

if (signedOut) askToken(false);
refresh();
setInterval(refresh, 1000);
