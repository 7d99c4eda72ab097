// The skywheel arena in a browser: one WebSocket to /ws, carrying the same
// text requests and answers as the terminal client (examples/README.md),
// one per message. window.arena holds the page's state (tests read it).
"use strict";

const SKILLS = { "1": "shield", "2": "rage", "3": "regen", "4": "poison", "5": "freeze", "6": "dispel" };
const DIRS = { ArrowUp: "n", ArrowDown: "s", ArrowLeft: "w", ArrowRight: "e" };
const CELL = 24;

const arena = {
  connected: false, name: null, x: 0, y: 0, hp: 0, maxhp: 0, gold: 0, kills: 0,
  quest: "-", dead: false, width: 20, height: 20,
  chest: null,    // when the chest opens (ms, performance.now clock), "off", or null: none
  buffs: {},      // skill -> expiry (ms, performance.now clock)
  players: {},    // name -> {x, y, dead}
  monsters: {},   // id -> {x, y, hp, dead}
  log: [], sent: 0, answers: 0, pending: [],
  labels: [],     // the labels drawn last frame: {text, x, y} (y: the top of the text)
};
const asked = []; // the requests waiting for their answers, oldest first
window.arena = arena;

const $ = (id) => document.getElementById(id);
let ws = null;

function fields(msg) {
  const t = {};
  for (const m of msg.matchAll(/([\w]+)=(\S*)/g)) t[m[1]] = m[2];
  return t;
}

function log(text, cls) {
  arena.log.push(text);
  if (arena.log.length > 200) arena.log.shift();
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  const ul = $("log");
  ul.appendChild(li);
  while (ul.children.length > 200) ul.removeChild(ul.firstChild);
  ul.scrollTop = ul.scrollHeight;
}

function send(req) {
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  arena.sent++;
  arena.pending.push(req.split(" ")[0]);
  asked.push(req);
  ws.send(req);
}

function setBuffs(list) {
  arena.buffs = {};
  if (!list || list === "none") return;
  for (const b of list.split(",")) {
    const [skill, secs] = b.split(":");
    arena.buffs[skill] = performance.now() + parseFloat(secs) * 1000;
  }
}

function parseLook(f) {
  const [w, h] = (f.map || "20x20").split("x").map(Number);
  arena.width = w; arena.height = h;
  arena.players = {};
  if (f.players && f.players !== "none") {
    for (const e of f.players.split(";")) {
      const m = e.match(/^(\w+)@(\d+),(\d+)(:dead)?$/);
      if (m) arena.players[m[1]] = { x: +m[2], y: +m[3], dead: !!m[4] };
    }
  }
  arena.monsters = {};
  if (f.monsters && f.monsters !== "none") {
    for (const e of f.monsters.split(";")) {
      const m = e.match(/^(\w+)@(\d+),(\d+):(\w+)$/);
      if (m) arena.monsters[m[1]] = { x: +m[2], y: +m[3], dead: m[4] === "dead", hp: m[4] === "dead" ? 0 : +m[4] };
    }
  }
  if (f.you) { const [x, y] = f.you.split(",").map(Number); arena.x = x; arena.y = y; }
}

function setChest(v) {
  if (v === undefined) return;
  arena.chest = v === "none" ? null : v === "off" ? "off" : performance.now() + parseFloat(v) * 1000;
}

function setHp(v) {
  const [cur, max] = v.split("/").map(Number);
  arena.hp = cur; if (max) arena.maxhp = max;
}

// "you" for this player, else the id.
function who(id) { return id === arena.name ? "you" : id; }

function onAnswer(msg) {
  arena.answers++;
  arena.pending.shift();
  const req = asked.shift() || "";
  const words = msg.split(" ");
  const cmd = words[1];
  const f = fields(msg);
  if (words[0] === "err") { log(`error (${cmd}): ${words.slice(2).join(" ")}`, "err"); return; }
  switch (cmd) {
    case "login":
      arena.name = f.name; arena.x = +f.x; arena.y = +f.y; setHp(f.hp);
      arena.gold = +f.gold; arena.quest = f.quest; setBuffs(f.buffs);
      log(`welcome, ${f.name} (hp ${f.hp}, gold ${f.gold})`, "me");
      if (+f.mail > 0) log(`${f.mail} message(s) waited for you while you were away:`, "me");
      send("look"); send("status");
      break;
    case "look": parseLook(f); break;
    case "status":
      arena.x = +f.x; arena.y = +f.y; setHp(f.hp); arena.gold = +f.gold; arena.kills = +f.kills;
      arena.quest = f.quest; arena.dead = f.dead === "yes"; setBuffs(f.buffs);
      setChest(f.chest);
      break;
    case "chest":
      arena.chest = performance.now() + parseFloat(f.opens_in) * 1000;
      log(`you start opening a chest: ${f.gold} gold in ${f.opens_in}s`, "me");
      break;
    case "mail":
      log(f.delivered === "now" ? `(mail delivered to ${f.to})` : `(mail kept for ${f.to} until the next login)`, "me");
      break;
    case "move": arena.x = +f.x; arena.y = +f.y; break;
    case "attack":
      log(`you hit ${f.target} for ${f.dmg}` + (f.killed ? " and kill it!" : ` (hp ${f.hp})`), "me");
      if (f.gold) arena.gold = +f.gold;
      if (f.quest) arena.quest = f.quest;
      if (f.killed) arena.kills++;
      break;
    case "cast": log(`you cast ${f.skill} on ${f.target === arena.name ? "yourself" : f.target}`, "me"); break;
    case "say": log(`[chat] you: ${req.replace(/^\S+\s+/, "")}`, "chat"); break;
    default: break;
  }
}

function entity(id) {
  if (id === arena.name) return null;
  return arena.monsters[id] || arena.players[id];
}

function onPush(msg) {
  const w = msg.split(" ");
  switch (w[0]) {
    case "hello": // its text is for a terminal ("type login <name>"): the page says what fits it
      log(`${msg.slice(6).split(":")[0]}: arrows move, space attacks, 1..6 cast, Enter chats`);
      break;
    case "enter": arena.players[w[1]] = { x: +w[2], y: +w[3], dead: false }; log(`${w[1]} entered the arena`); break;
    case "leave": delete arena.players[w[1]]; log(`${w[1]} left`); break;
    case "move": {
      if (w[1] === arena.name) { arena.x = +w[2]; arena.y = +w[3]; break; }
      const e = entity(w[1]);
      if (e) { e.x = +w[2]; e.y = +w[3]; }
      else if (/^m\d+$/.test(w[1])) arena.monsters[w[1]] = { x: +w[2], y: +w[3], hp: 1, dead: false };
      else arena.players[w[1]] = { x: +w[2], y: +w[3], dead: false };
      break;
    }
    case "hit":
      if (w[2] === arena.name) { arena.hp = +w[4]; log(`${w[1]} hits you for ${w[3]}`, "err"); }
      else { const e = entity(w[2]); if (e) e.hp = +w[4]; }
      break;
    case "heal":
      if (w[1] === arena.name) arena.hp = +w[3];
      break;
    case "die":
      if (w[1] === arena.name) { arena.dead = true; arena.hp = 0; arena.buffs = {}; log(`you were killed by ${w[2]}`, "err"); }
      else { const e = entity(w[1]); if (e) e.dead = true; log(`${w[1]} was killed by ${who(w[2])}`); }
      break;
    case "spawn":
      if (w[1] === arena.name) { arena.dead = false; arena.x = +w[2]; arena.y = +w[3]; arena.hp = +w[4]; }
      else if (/^m\d+$/.test(w[1])) arena.monsters[w[1]] = { x: +w[2], y: +w[3], hp: +w[4], dead: false };
      else arena.players[w[1]] = { x: +w[2], y: +w[3], dead: false };
      break;
    case "buff":
      if (w[1] === arena.name) { arena.buffs[w[2]] = performance.now() + parseFloat(w[3]) * 1000; log(`you gain ${w[2]} for ${w[3]}s (cast by ${who(w[4])})`, "me"); }
      break;
    case "unbuff":
      if (w[1] === arena.name) { delete arena.buffs[w[2]]; log(`you lose ${w[2]} (${w[3]})`); }
      break;
    case "chat": log(`[chat] ${w[1]}: ${w.slice(2).join(" ")}`, "chat"); break;
    case "tell": log(`[whisper] ${w[1]}: ${w.slice(2).join(" ")}`, "chat"); break;
    case "mail": log(`[mail] ${w[1]}: ${w.slice(2).join(" ")}`, "chat"); break;
    case "chest": {
      const f = fields(msg); arena.gold = +f.total; arena.chest = null;
      log(`your chest opened${f.ago ? ` ${f.ago}s ago` : ""}: ${f.gold} gold`, "me");
      break;
    }
    case "reward": { const f = fields(msg); arena.gold = +f.total; log(`reward: ${f.gold} gold`, "me"); break; }
    case "quest": { const f = fields(msg); arena.gold = +f.total; log("daily quest done!", "me"); break; }
    case "daily": { const f = fields(msg); arena.quest = f.quest; log(f.ago ? `daily reset (${f.ago}s ago)` : "daily reset"); break; }
    case "kick": log(`disconnected: ${msg.slice(5)}`, "err"); break;
    case "skipped": send("look"); break; // events between others were held back: redraw from look
    default: log(msg);
  }
}

function onMessage(ev) {
  const msg = String(ev.data);
  if (msg.startsWith("ok ") || msg.startsWith("err ")) onAnswer(msg); else onPush(msg);
  panel();
}

function connect(name) {
  if (ws) ws.close();
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
  ws = new WebSocket(url);
  $("conn").textContent = "connecting...";
  ws.onopen = () => { arena.connected = true; $("conn").textContent = "connected"; send("login " + name); $("map").focus(); };
  ws.onclose = () => { arena.connected = false; $("conn").textContent = "not connected"; };
  ws.onmessage = onMessage;
}

function draw() {
  const c = $("map");
  const g = c.getContext("2d");
  c.width = arena.width * CELL; c.height = arena.height * CELL;
  g.fillStyle = "#263238"; g.fillRect(0, 0, c.width, c.height);
  g.strokeStyle = "#2f3d44";
  for (let i = 0; i <= arena.width; i++) { g.beginPath(); g.moveTo(i * CELL, 0); g.lineTo(i * CELL, c.height); g.stroke(); }
  for (let j = 0; j <= arena.height; j++) { g.beginPath(); g.moveTo(0, j * CELL); g.lineTo(c.width, j * CELL); g.stroke(); }
  g.font = "10px sans-serif"; g.textAlign = "center"; g.textBaseline = "top";
  arena.labels = [];
  const dot = (x, y, color, label, dead) => {
    const cx = x * CELL + CELL / 2, cy = y * CELL + CELL / 2;
    g.fillStyle = dead ? "#555" : color;
    g.beginPath(); g.arc(cx, cy, CELL / 2 - 3, 0, Math.PI * 2); g.fill();
    if (dead) { g.strokeStyle = "#e57373"; g.beginPath(); g.moveTo(cx - 6, cy - 6); g.lineTo(cx + 6, cy + 6); g.moveTo(cx + 6, cy - 6); g.lineTo(cx - 6, cy + 6); g.stroke(); }
    // above the cell; below it on the top row, where above is off the canvas
    const ty = y > 0 ? cy - CELL / 2 - 10 : cy + CELL / 2 - 2;
    g.fillStyle = "#fff"; g.fillText(label, cx, ty);
    arena.labels.push({ text: label, x: cx, y: ty });
  };
  for (const [id, m] of Object.entries(arena.monsters)) dot(m.x, m.y, "#ef5350", m.dead ? id : `${id} ${m.hp}hp`, m.dead);
  for (const [id, p] of Object.entries(arena.players)) if (id !== arena.name) dot(p.x, p.y, "#42a5f5", id, p.dead);
  if (arena.name) dot(arena.x, arena.y, "#ffee58", arena.name, arena.dead);
}

function panel() {
  $("who").textContent = arena.name || "-";
  $("pos").textContent = arena.name ? `${arena.x},${arena.y}` : "-";
  $("hp").textContent = arena.maxhp ? `${arena.hp}/${arena.maxhp}` : "-";
  $("hpbar").style.width = arena.maxhp ? `${Math.max(0, 100 * arena.hp / arena.maxhp)}%` : "0";
  $("gold").textContent = arena.gold;
  $("quest").textContent = arena.quest;
  $("kills").textContent = arena.kills;
  $("dead").hidden = !arena.dead;
  const now = performance.now();
  const parts = [];
  for (const [skill, until] of Object.entries(arena.buffs)) {
    const left = (until - now) / 1000;
    if (left <= 0) continue;
    parts.push(`<span class="buff">${skill} ${left.toFixed(1)}s</span>`);
  }
  $("buffs").innerHTML = parts.length ? parts.join("") : "none";
  $("chest").textContent = arena.chest === null ? "none (press c)" : arena.chest === "off" ? "off on this server"
    : `opens in ${Math.max(0, (arena.chest - now) / 1000).toFixed(1)}s`;
}

function frame() { draw(); panel(); requestAnimationFrame(frame); }

document.addEventListener("keydown", (ev) => {
  if (document.activeElement === $("say") || document.activeElement === $("name")) return;
  if (DIRS[ev.key]) { send("move " + DIRS[ev.key]); ev.preventDefault(); }
  else if (ev.key === " " || ev.key === "a") { send("attack"); ev.preventDefault(); }
  else if (SKILLS[ev.key]) { send("cast " + SKILLS[ev.key]); ev.preventDefault(); }
  else if (ev.key === "c") { send("chest"); ev.preventDefault(); }
  else if (ev.key === "Enter") { $("say").focus(); ev.preventDefault(); }
});

$("login").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const name = $("name").value.trim();
  if (name) connect(name);
});

$("chat").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("say").value.trim();
  if (text.startsWith("/")) { if (text.length > 1) send(text.slice(1)); } // a request: /mail bob hi
  else if (text) send("say " + text);
  $("say").value = "";
  $("map").focus();
});

// keep the view fresh and the session alive while the page is open
setInterval(() => { if (arena.name) { send("look"); send("status"); } }, 5000);
log("type a name above and press play (or Enter) to enter the arena");
requestAnimationFrame(frame);
