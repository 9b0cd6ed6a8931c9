// Shows whether the dashboard's live connection is up; htmx's ws extension reconnects by itself. A lost
// connection is said where the person is looking, above the questions, not only in the small badge (issue 39).
document.addEventListener("htmx:wsOpen", () => {
  setConnection("live", "live");
  const lost = document.getElementById("connection-lost");
  if (lost) lost.remove();
});
// The server closes with 4205 when what the person may see changed (core.consumers.RECONNECT): connect again,
// after a moment's jitter so a change for a whole team does not bring every page back in the same instant.
// htmx's ws extension makes a new socket for an element when it is processed again.
const RECONNECT = 4205;
// How long to wait before the next try: doubling from half a second, never past 4 s, jittered so a whole team's
// pages do not come back in the same instant. The extension's own "full-jitter" grows to 64 s, so a page kept
// saying "reconnecting…" for 20 s after the server was back and sending already worked (issue 55).
const RECONNECT_CAP_MS = 4000;
htmx.config.wsReconnectDelay = (retries) => Math.min(500 * 2 ** retries, RECONNECT_CAP_MS) * (0.5 + Math.random() / 2);
document.addEventListener("htmx:wsClose", (event) => {
  const closed = event.detail && event.detail.event;
  if (closed && closed.code === RECONNECT) {
    const source = event.target;
    setTimeout(() => htmx.trigger(source, "htmx:beforeProcessNode"), 200 + Math.random() * 800);
  }
});
document.addEventListener("htmx:wsClose", () => {
  setConnection("reconnecting", "reconnecting…");
  delete document.body.dataset.synced;
  const list = document.getElementById("question-list");
  if (list && !document.getElementById("connection-lost")) {
    const lost = document.createElement("p");
    lost.id = "connection-lost";
    lost.className = "connection-lost";
    lost.setAttribute("role", "alert");
    lost.textContent = "Connection to the server lost: reconnecting… Questions shown may have been answered elsewhere, and an answer sent now may not arrive.";
    list.before(lost);
  }
});
// The server's first message after a (re)connect is the whole current state: from then on the page is it.
document.addEventListener("htmx:wsAfterMessage", () => { document.body.dataset.synced = "true"; });

function setConnection(state, text) {
  const badge = document.getElementById("connection");
  if (badge) {
    badge.dataset.state = state;
    badge.textContent = text;
  }
}

// Ages read "3 min ago" and stay current; the exact time is in each one's title.
function relative(seconds) {
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min ago`;
  return `${Math.floor(seconds / 86400)} days ago`;
}

function refreshAges() {
  for (const time of document.querySelectorAll("time[data-relative]")) {
    const asked = Date.parse(time.getAttribute("datetime"));
    if (!Number.isNaN(asked)) time.textContent = relative(Math.max(0, (Date.now() - asked) / 1000));
  }
}
document.addEventListener("DOMContentLoaded", refreshAges);
document.addEventListener("htmx:load", refreshAges);
setInterval(refreshAges, 30_000);

// Time left on a question someone gives up on: "The host gives up in 4 min 10 s", every second.
function left(seconds) {
  if (seconds <= 0) return "now";
  const minutes = Math.floor(seconds / 60);
  return minutes ? `in ${minutes} min ${Math.floor(seconds % 60)} s` : `in ${Math.floor(seconds)} s`;
}

function countDown() {
  for (const line of document.querySelectorAll(".countdown[data-deadline]")) {
    const deadline = Date.parse(line.dataset.deadline);
    const text = line.querySelector(".countdown-text");
    if (Number.isNaN(deadline) || !text) continue;
    // An agent that stopped waiting gives up on nothing any more: its card says so instead (issue 39: "The agent
    // stopped waiting…" stood beside "The agent gives up in 16 min").
    const card = line.closest("article.question");
    const state = card && card.querySelector(".agent-state");
    line.hidden = Boolean(state && state.textContent.trim());
    const seconds = (deadline - Date.now()) / 1000;
    const who = line.closest(".kind-approval") ? "The host" : "The agent";
    text.textContent = seconds > 0 ? `${who} gives up ${left(seconds)}` : `${who} gave up waiting`;
    line.dataset.urgency = seconds < 60 ? "now" : seconds < 300 ? "soon" : "";
  }
}
document.addEventListener("DOMContentLoaded", countDown);
document.addEventListener("htmx:load", countDown);
setInterval(countDown, 1000);

// The queue's filters and grouping live in the URL (a filtered view can be bookmarked); new cards pushed
// over the WebSocket are filtered as they arrive.
const FILTERS = { project: "project", agent: "asker", kind: "kind" };

function applyFilters() {
  const form = document.querySelector(".queue-filters");
  const list = document.getElementById("question-list");
  if (!form || !list) return;
  const params = new URLSearchParams(location.search);
  const cards = [...list.querySelectorAll("article.question")];
  const group = params.get("group");
  // Grouping is the order of the cards (the list is a flex column): one position per group value, sorted.
  const groups = group ? [...new Set(cards.map((card) => card.dataset[group] || ""))].sort() : [];
  if (!group) leadWithDeadlines(list, cards);
  let shown = 0;
  for (const card of cards) {
    const match = Object.entries(FILTERS).every(([param, data]) => !params.get(param) || card.dataset[data] === params.get(param));
    card.hidden = !match;
    if (match) shown += 1;
    card.style.order = group ? String(groups.indexOf(card.dataset[group] || "")) : "";
  }
  const none = document.querySelector(".filtered-out");
  if (none) none.hidden = shown > 0 || !list.querySelector("article.question");
}

// Without grouping, what someone gives up on soonest leads (issue 29): cards with a deadline first, soonest
// first, then the rest in asking order; a card pushed later takes its place by the same rule. The cards are
// moved, not restyled (a style attribute is refused by the page's CSP when htmx settles a swap), and only
// those out of place move, so a card someone is typing into keeps its focus.
function leadWithDeadlines(list, cards) {
  const urgent = cards.filter((card) => card.dataset.deadline).sort((a, b) => Date.parse(a.dataset.deadline) - Date.parse(b.dataset.deadline));
  const focused = document.activeElement;
  let expected = list.firstElementChild;
  for (const card of urgent) {
    if (card === expected) expected = expected.nextElementSibling;
    else list.insertBefore(card, expected);
  }
  // A move takes the focus from what is inside the moved card: a person typing there keeps typing.
  if (focused instanceof HTMLElement && focused !== document.activeElement && focused.isConnected) focused.focus({ preventScroll: true });
}

function loadFilters() {
  const form = document.querySelector(".queue-filters");
  if (!form) return;
  const params = new URLSearchParams(location.search);
  for (const select of form.querySelectorAll("select")) {
    const wanted = params.get(select.name) || "";
    if (wanted && ![...select.options].some((option) => option.value === wanted)) select.add(new Option(wanted, wanted));
    select.value = wanted;
  }
  applyFilters();
}

document.addEventListener("change", (event) => {
  const form = event.target.closest && event.target.closest(".queue-filters");
  if (!form) return;
  const params = new URLSearchParams();
  for (const select of form.querySelectorAll("select")) if (select.value) params.set(select.name, select.value);
  history.replaceState(null, "", params.toString() ? `?${params}` : location.pathname);
  applyFilters();
});
document.addEventListener("DOMContentLoaded", loadFilters);
document.addEventListener("htmx:load", applyFilters);

function toast(text) {
  const box = document.getElementById("toasts");
  if (!box || !text) return;
  const said = document.createElement("p");
  said.className = "toast";
  said.textContent = text;
  box.append(said);
}

// A toast that has faded out leaves the page, so toasts do not pile up.
document.addEventListener("animationend", (event) => {
  if (event.target.classList && event.target.classList.contains("toast")) {
    event.target.remove();
  }
});

// The tab title counts the waiting questions, so a background tab still shows them.
const baseTitle = document.title;
function updateTitle() {
  const count = parseInt((document.getElementById("pending-count") || {}).textContent || "0", 10);
  document.title = count > 0 ? `(${count}) ${baseTitle}` : baseTitle;
}
document.addEventListener("DOMContentLoaded", () => {
  updateTitle();
  showNotifyState();
});
document.addEventListener("htmx:oobAfterSwap", updateTitle);
document.addEventListener("htmx:wsAfterMessage", updateTitle);
// A card pushed because a question was just asked carries data-announce (questions/card.html#question-added).
document.addEventListener("htmx:load", (event) => {
  const card = event.detail.elt;
  if (!(card instanceof Element) || !card.matches("article.question")) return;
  // The queue's next page may bring a card that a push already added (questions.queue): the one
  // already there stays, with whatever was typed into it.
  if (card.id && [...document.querySelectorAll(`article.question[id="${card.id}"]`)].some((other) => other !== card)) {
    card.remove();
    return;
  }
  if (card.matches("[data-announce]")) {
    announce(card);
  }
  // A card sent back in place of the open one (a refused answer) is the open one: shown before it takes the focus.
  const queue = queueBox();
  if (queue && queue.dataset.open === card.id) card.classList.add("open");
  // A card sent back with a problem (422): the first field at fault takes the focus, so the message
  // next to it is read out and the person can fix it at once.
  const invalid = card.querySelector('[aria-invalid="true"]');
  if (invalid) {
    const target = invalid.matches("input, textarea, select") ? invalid : invalid.querySelector("input:checked, input");
    (target || invalid).focus();
  }
});

// A question answered, dismissed or withdrawn elsewhere: its card's banner arrives (questions/card.html#question-removed).
// A card nobody touched goes; one with something typed or ticked stays, read-only, until its Close is clicked, so
// nothing a person wrote vanishes under their hands.
function touched(card) {
  return [...card.querySelectorAll("textarea, input")].some((field) =>
    field.type === "checkbox" || field.type === "radio" ? field.checked : field.value.trim() !== "");
}

// On htmx:load, which the banner gets once swapped in (oobAfterSwap fires on the element it replaced, detached).
document.addEventListener("htmx:load", (event) => {
  const banner = event.detail.elt;
  if (!(banner instanceof Element) || !banner.matches(".resolution")) return;
  const card = banner.closest("article.question");
  if (!card) return;
  if (!touched(card)) {
    // It leaves the list with a word on why (issue 42); other outcomes bring the server's own notice.
    if (banner.classList.contains("outcome-answered")) toast(banner.firstChild ? banner.textContent.replace(/\s*Close\s*$/, "") : "");
    card.remove();
    return;
  }
  card.classList.add("closed");
  card.removeAttribute("data-question-id");
  // Nobody answers a resolved question any more: its claim line goes, whoever held it (issue 29).
  for (const line of card.querySelectorAll(".claim")) line.hidden = true;
  for (const field of card.querySelectorAll("textarea, input[type=text]")) field.readOnly = true;
  for (const control of card.querySelectorAll("button:not(.close-card), input[type=checkbox], input[type=radio]")) {
    control.disabled = true;
  }
});

document.addEventListener("click", (event) => {
  const close = event.target.closest && event.target.closest(".close-card");
  if (close) close.closest("article.question").remove();
  if (event.target.closest && event.target.closest("[data-shortcuts]")) toggleShortcuts();
});

// Claims: "<name> is answering" on every dashboard. A click on "I'm answering this", or typing into a card,
// claims it (again at most every 30 s while typing); a line whose time has passed is hidden here.
const lastClaimed = new Map();

function claim(card, force) {
  const line = card.querySelector(".claim");
  if (!line) return;
  const now = Date.now();
  // Typing renews the claim at most every 30 s, and at once when the line shows no live claim. A claim
  // whose time has passed is not live even before lapseClaims (once a second) has hidden it: typing in
  // that second claimed nothing (a CI failure of the browser test).
  const live = line.dataset.expires && Date.parse(line.dataset.expires) > now;
  if (!force && live && now - (lastClaimed.get(card.id) || 0) < 30_000) return;
  lastClaimed.set(card.id, now);
  htmx.ajax("POST", line.dataset.claimUrl, { swap: "none" });
}

function lapseClaims() {
  for (const line of document.querySelectorAll(".claim[data-expires]")) {
    if (Date.parse(line.dataset.expires) <= Date.now()) {
      line.removeAttribute("data-expires");
      const holder = line.querySelector(".claim-holder");
      if (holder) holder.remove();
    }
  }
}
setInterval(lapseClaims, 1000);

document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest("[data-claim]");
  if (button) claim(button.closest("article.question"), true);
});
document.addEventListener("input", (event) => {
  const card = event.target.closest && event.target.closest("article.question:not(.closed)");
  if (card && card.closest("#question-list")) claim(card, false);
});

// Opt-in browser notifications and a short sound when a question arrives.
function notifyEnabled() {
  return localStorage.getItem("hookbridge-notify") === "on" && "Notification" in window
    && Notification.permission === "granted";
}

function showNotifyState() {
  const button = document.getElementById("notify-toggle");
  if (!button) return;
  const on = notifyEnabled();
  button.textContent = on ? "Notifications on" : "Notify me of new questions";
  button.setAttribute("aria-pressed", on ? "true" : "false");
}

document.addEventListener("click", async (event) => {
  if (!event.target.closest || !event.target.closest("#notify-toggle")) return;
  if (notifyEnabled()) {
    localStorage.setItem("hookbridge-notify", "off");
  } else if ("Notification" in window) {
    const permission = await Notification.requestPermission();
    localStorage.setItem("hookbridge-notify", permission === "granted" ? "on" : "off");
  }
  showNotifyState();
});

function announce(card) {
  if (!notifyEnabled()) return;
  const asker = card.querySelector(".asker").textContent.trim();
  const body = (card.querySelector(".markdown, dd, legend") || card).textContent.trim().slice(0, 200);
  new Notification(`${asker} asks`, { body, tag: card.id });
  try {
    const audio = new AudioContext();
    const tone = audio.createOscillator();
    tone.frequency.value = 880;
    tone.connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.15);
  } catch (error) {
    // No sound is no reason to miss the notification.
  }
}

// Keyboard: j/k move between cards, 1–9 choose an option on the current card (nothing is sent),
// Enter on a choice or Ctrl/Cmd+Enter anywhere in the card sends it, ? shows the keys. Keys typed
// into a text field stay there, but for Ctrl/Cmd+Enter. Choosing and sending are two acts (issue 29).
function cards() {
  // In the order a person sees them: triage and grouping order cards with CSS (applyFilters).
  const all = [...document.querySelectorAll("#question-list > article.question:not(.closed)")].filter((card) => !card.hidden);
  return all.map((card, index) => [Number(card.style.order || 0), index, card]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((entry) => entry[2]);
}

function currentCard() {
  const active = document.activeElement;
  return (active && active.closest && active.closest("article.question:not(.closed)")) || null;
}

function pick(card, number) {
  // An option, a tile or a decision: chosen, never sent (issue 29).
  const choices = [...card.querySelectorAll("label.pick input[type=radio]")];
  if (choices.length) {
    const choice = choices[number - 1];
    if (choice) { choice.checked = true; choice.focus(); choice.dispatchEvent(new Event("change", { bubbles: true })); }
    return;
  }
  // A rating on the scale the focus is in (the first one when none is).
  const scales = [...card.querySelectorAll(".scale")];
  if (scales.length) {
    const scale = (document.activeElement && document.activeElement.closest(".scale")) || scales[0];
    const step = [...scale.querySelectorAll("input[type=radio]")][number - 1];
    if (step) { step.checked = true; step.focus(); }
    return;
  }
  const boxes = [...card.querySelectorAll("input[type=checkbox]")];
  const box = boxes[number - 1];
  if (box) { box.checked = !box.checked; box.dispatchEvent(new Event("change", { bubbles: true })); }
}

// One choice per card: a tile and "Reject all" are two fields (choice, action), chosen as one group.
// Writing your own answer un-chooses the offered options, so what is sent is what was last chosen.
document.addEventListener("change", (event) => {
  const input = event.target;
  if (!(input instanceof HTMLInputElement) || input.type !== "radio" || !input.closest("label.pick")) return;
  const form = input.closest("form");
  if (!form) return;
  for (const other of form.querySelectorAll("label.pick input[type=radio]:checked")) {
    if (other !== input && other.name !== input.name) other.checked = false;
  }
});
document.addEventListener("input", (event) => {
  const box = event.target;
  const form = box.closest && box.closest("form");
  if (!form || !box.value || !box.value.trim()) return;
  if (box.name === "answer") for (const option of form.querySelectorAll("input[type=radio][name=option]")) option.checked = false;
  // An approval's edited input or reason to deny chooses what they belong to; Send still sends.
  const belongs = { updatedInput: "edit", message: "deny" }[box.name];
  const decision = belongs && form.querySelector(`input[type=radio][name=behavior][value=${belongs}]`);
  if (decision) decision.checked = true;
});
document.addEventListener("change", (event) => {
  const input = event.target;
  if (input instanceof HTMLInputElement && input.name === "behavior" && input.value === "edit" && input.checked) {
    const details = input.closest("form").querySelector("details.edit-input");
    if (details) details.open = true;
  }
});

function send(card) {
  const form = card.querySelector("form");
  const button = form && (form.querySelector("button.primary") || form.querySelector("button[type=submit]"));
  // A click, not requestSubmit(): htmx takes the pressed button's name and value (completionStatus) from it.
  if (button && !button.disabled) button.click();
}

function toggleShortcuts() {
  const dialog = document.getElementById("shortcuts");
  if (!dialog) return;
  if (dialog.open) dialog.close(); else dialog.showModal();
}

// The boxes Enter moves between on a card: a one-line box, a tick box or a rating never sends (issue 39).
const ONE_LINE = "input:not([type=submit]):not([type=button]):not([type=hidden]):not([type=file])";

function moveOn(field) {
  // The next box to write in, in the order of the form; none after this one: Enter does nothing.
  const boxes = [...field.form.querySelectorAll(`${ONE_LINE}:not([type=checkbox]):not([type=radio]), textarea`)]
    .filter((box) => !box.disabled && !box.readOnly && box.offsetParent !== null);
  const next = boxes[boxes.indexOf(field) + 1];
  if (next) next.focus();
}

document.addEventListener("keydown", (event) => {
  const typing = event.target.closest && event.target.closest("textarea, input:not([type=checkbox]):not([type=radio]), select");
  if (event.key === "Escape" && !document.querySelector("dialog[open]") && closeQuestion()) {
    event.preventDefault();
    return;
  }
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    const card = currentCard();
    if (card) { event.preventDefault(); send(card); }
    return;
  }
  // The browser sends a form when Enter is pressed in any of its one-line boxes or tick boxes (implicit
  // submission): a half-written answer went that way, the other sub-questions blank. On a card, Enter
  // moves on to the next box instead; only Send, Ctrl/Cmd+Enter, or Enter on a chosen decision sends.
  const field = event.target;
  if (event.key === "Enter" && field instanceof HTMLInputElement && field.form && field.closest("article.question")
    && field.matches(ONE_LINE) && !field.matches("label.pick input[type=radio]")) {
    event.preventDefault();
    if (!field.matches("[type=checkbox], [type=radio]")) moveOn(field);
    return;
  }
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "Enter" && event.target.matches && event.target.matches("label.pick input[type=radio]")) {
    const card = currentCard();
    if (card) { event.preventDefault(); send(card); }
    return;
  }
  if (event.key === "?") { event.preventDefault(); toggleShortcuts(); return; }
  if (event.key === "j" || event.key === "k") {
    if (moveSelection(event.key === "j" ? 1 : -1)) event.preventDefault();
    return;
  }
  // Enter on a row is the row's own click; o opens the row in focus, else the one chosen.
  if (event.key === "o") {
    const row = event.target.closest && event.target.closest(".triage-row");
    const card = row ? document.getElementById(row.dataset.for) : selectedCard();
    if (card) { event.preventDefault(); openQuestion(card, true); }
    return;
  }
  if (/^[1-9]$/.test(event.key)) {
    const card = currentCard();
    if (card) { event.preventDefault(); pick(card, Number(event.key)); }
  }
});

// A <details> that a live push replaces keeps the state the person left it in (the status bar's agents).
document.addEventListener("toggle", (event) => {
  const details = event.target;
  if (details instanceof HTMLDetailsElement && details.dataset.keepOpen) {
    sessionStorage.setItem(`open:${details.dataset.keepOpen}`, details.open ? "1" : "");
  }
}, true);
document.addEventListener("htmx:load", (event) => {
  for (const details of event.detail.elt.querySelectorAll ? event.detail.elt.querySelectorAll("details[data-keep-open]") : []) {
    details.open = sessionStorage.getItem(`open:${details.dataset.keepOpen}`) === "1";
  }
});
document.addEventListener("DOMContentLoaded", () => {
  for (const details of document.querySelectorAll("details[data-keep-open]")) {
    details.open = sessionStorage.getItem(`open:${details.dataset.keepOpen}`) === "1";
  }
});

// Your own claim reads "You are answering", not your name (the push is the same HTML for everyone).
function ownClaims(root) {
  const me = document.querySelector('meta[name="hookbridge-user"]');
  if (!me || !me.content || !root.querySelectorAll) return;
  for (const holder of root.querySelectorAll(".claim-holder[data-holder]")) {
    if (holder.dataset.holder === me.content) holder.textContent = "You are answering";
  }
}
document.addEventListener("DOMContentLoaded", () => ownClaims(document));
document.addEventListener("htmx:load", (event) => ownClaims(event.detail.elt.parentElement || event.detail.elt));

// Copy buttons beside a command to paste (tokens/connect.html). The clipboard API needs a secure
// context (127.0.0.1 and localhost are; a LAN address over plain HTTP is not): there the text is
// selected and copied the old way.
document.addEventListener("click", async (event) => {
  const button = event.target.closest && event.target.closest("button[data-copy]");
  if (!button) return;
  // The text to copy: the button's own data-copy (a question's signed link), else the command beside it.
  const source = button.dataset.copy ? null : button.parentElement.querySelector("pre, code");
  if (!button.dataset.copy && !source) return;
  const text = button.dataset.copy || source.textContent;
  const label = button.textContent;
  let copied = false;
  try {
    if (navigator.clipboard && window.isSecureContext) { await navigator.clipboard.writeText(text); copied = true; }
  } catch (_) { copied = false; }
  if (!copied && source) {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    copied = document.execCommand("copy");
  }
  button.textContent = copied ? "Copied" : source ? "Selected: press Ctrl+C" : "Could not copy here";
  setTimeout(() => { button.textContent = label; }, 2500);
});

// Reusable replies (questions/replies.html): the person's saved replies, then the ones they typed lately,
// offered under every answer box as buttons, and as Alt+1…9 in any text box of a card. Putting one in never
// sends it. The list comes once per page, as JSON: a card is pushed to every dashboard alike.
function myReplies() {
  const data = document.getElementById("my-replies");
  if (!data) return null;
  const { saved, recent } = JSON.parse(data.textContent);
  return [...saved.map((text) => ({ text, kind: "saved" })), ...recent.map((text) => ({ text, kind: "recent" }))].slice(0, 9);
}

function putReply(field, text) {
  const start = field.selectionStart ?? field.value.length;
  const end = field.selectionEnd ?? field.value.length;
  field.value = field.value.trim() === "" ? text : field.value.slice(0, start) + text + field.value.slice(end);
  field.focus();
  field.dispatchEvent(new Event("input", { bubbles: true }));
}

function offerReplies(root) {
  const replies = myReplies();
  if (replies === null) return;
  for (const field of root.querySelectorAll("article.question form textarea:not(.edit-input textarea)")) {
    if (field.dataset.repliesOffered) continue;
    field.dataset.repliesOffered = "true";
    const bar = document.createElement("div");
    bar.className = "quick-replies";
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", "Your replies: a click puts one in the box");
    replies.forEach((reply, index) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = `reply-chip ${reply.kind}`;
      button.title = reply.text;
      const key = document.createElement("kbd");
      key.className = "key-hint";
      key.setAttribute("aria-hidden", "true");
      key.textContent = `Alt+${index + 1}`;
      const words = document.createElement("span");
      words.textContent = reply.text.length > 40 ? `${reply.text.slice(0, 39)}…` : reply.text;
      button.append(key, " ", words);
      button.addEventListener("click", () => putReply(field, reply.text));
      bar.append(button);
    });
    const manage = document.createElement("a");
    manage.href = "/replies/";
    manage.className = "muted";
    manage.textContent = replies.length ? "Your replies" : "Save replies to reuse";
    bar.append(manage);
    (field.closest("label") || field).after(bar);
  }
}
document.addEventListener("DOMContentLoaded", () => offerReplies(document));
document.addEventListener("htmx:load", (event) => { if (event.detail.elt instanceof Element) offerReplies(event.detail.elt); });

document.addEventListener("keydown", (event) => {
  const field = event.target;
  if (!event.altKey || event.ctrlKey || event.metaKey || !/^Digit[1-9]$/.test(event.code)) return;
  if (!field.closest || !field.closest("article.question form") || !field.matches("textarea, input[type=text]")) return;
  const reply = (myReplies() || [])[Number(event.code.slice(5)) - 1];
  if (!reply) return;
  event.preventDefault();
  putReply(field, reply.text);
});

// An answer sent: its words are now the newest of the replies used lately, on this page too.
document.addEventListener("htmx:beforeRequest", (event) => {
  const form = event.detail.elt;
  if (!(form instanceof HTMLFormElement) || !form.closest("article.question")) return;
  const field = form.querySelector("textarea[name=answer]");
  const data = document.getElementById("my-replies");
  if (!field || !data || !field.value.trim()) return;
  form.dataset.sentReply = field.value.trim();
});
// Before the swap: the answered card (and its form) leave the page with it, and a detached form's events
// reach no listener here.
document.addEventListener("htmx:beforeSwap", (event) => {
  const form = event.detail.requestConfig && event.detail.requestConfig.elt;
  const data = document.getElementById("my-replies");
  if (!(form instanceof HTMLFormElement) || !form.dataset.sentReply || !data || event.detail.xhr.status !== 200) return;
  const replies = JSON.parse(data.textContent);
  const text = form.dataset.sentReply;
  if (!replies.saved.includes(text)) replies.recent = [text, ...replies.recent.filter((t) => t !== text)].slice(0, 5);
  data.textContent = JSON.stringify(replies);
  // Every box on the page offers the new list (a text box keeps what is typed in it).
  for (const bar of document.querySelectorAll(".quick-replies")) bar.remove();
  for (const field of document.querySelectorAll("[data-replies-offered]")) delete field.dataset.repliesOffered;
  offerReplies(document);
});

// Images with a free-text answer (questions/card.html#images-field): a screenshot pasted or dropped into the
// answer box joins the form's file field, each shown before it is sent and removable. The server checks them
// again (questions.images); here a wrong type, size or count is said at once, and nothing is sent.
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

function imagesField(form) { return form && form.querySelector(".images-field"); }

function showImages(field, problem) {
  const input = field.querySelector("input[type=file]");
  const list = field.querySelector(".image-previews");
  const said = field.querySelector(".image-problem");
  for (const old of list.querySelectorAll("img")) URL.revokeObjectURL(old.src);
  list.replaceChildren();
  [...input.files].forEach((file, index) => {
    const item = document.createElement("li");
    const image = document.createElement("img");
    image.src = URL.createObjectURL(file);
    image.alt = `Image ${index + 1}: ${file.name || "pasted"}`;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "link remove-image";
    remove.textContent = "Remove";
    remove.setAttribute("aria-label", `Remove image ${index + 1}`);
    remove.addEventListener("click", () => {
      const kept = new DataTransfer();
      [...input.files].forEach((other, n) => { if (n !== index) kept.items.add(other); });
      input.files = kept.files;
      showImages(field, "");
    });
    item.append(image, remove);
    list.append(item);
  });
  said.hidden = !problem;
  said.textContent = problem || "";
  input.setAttribute("aria-invalid", problem ? "true" : "false");
}

function addImages(field, files) {
  const input = field.querySelector("input[type=file]");
  const most = Number(field.dataset.maxImages);
  const largest = Number(field.dataset.maxImageBytes);
  const all = new DataTransfer();
  for (const file of input.files) all.items.add(file);
  let problem = "";
  for (const file of files) {
    if (!IMAGE_TYPES.includes(file.type)) problem = `${file.name || "That"} is not a PNG, JPEG, WebP or GIF image.`;
    else if (file.size > largest) problem = `${file.name || "That image"} is over ${Math.round(largest / 1048576)} MB.`;
    else if (all.files.length >= most) problem = `At most ${most} images go with an answer.`;
    else all.items.add(file);
  }
  input.files = all.files;
  showImages(field, problem);
}

document.addEventListener("paste", (event) => {
  const box = event.target.closest && event.target.closest("article.question form textarea");
  const field = box && imagesField(box.form);
  const files = event.clipboardData ? [...event.clipboardData.files] : [];
  if (!field || !files.length) return;
  event.preventDefault();  // the image goes with the answer, not as its file name into the text
  addImages(field, files);
});
document.addEventListener("dragover", (event) => {
  if (event.target.closest && imagesField(event.target.closest("article.question form"))) event.preventDefault();
});
document.addEventListener("drop", (event) => {
  const field = event.target.closest && imagesField(event.target.closest("article.question form"));
  const files = event.dataTransfer ? [...event.dataTransfer.files] : [];
  if (!field || !files.length) return;
  event.preventDefault();
  addImages(field, files);
});
document.addEventListener("change", (event) => {
  const field = event.target.matches && event.target.matches(".images-field input[type=file]") && event.target.closest(".images-field");
  if (!field) return;
  const chosen = [...event.target.files];
  event.target.files = new DataTransfer().files;
  addImages(field, chosen);
});

// A send that never reached the server (issue 39: the card said nothing, only the small badge did): said on
// the card at once, everything typed kept, with Retry, which presses the same button again.
const lastPressed = new WeakMap();
document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest("article.question button[type=submit], article.question button[hx-post]");
  if (button) lastPressed.set(button.closest("article.question"), button);
});

function sendFailed(card, words) {
  let said = card.querySelector(".send-failed");
  if (!said) {
    said = document.createElement("p");
    said.className = "error send-failed";
    said.setAttribute("role", "alert");
    const text = document.createElement("span");
    const retry = document.createElement("button");
    retry.type = "button";
    retry.className = "retry-send";
    retry.textContent = "Retry";
    said.append(text, retry);
    (card.querySelector(".send-bar, .actions") || card.querySelector("form") || card).after(said);
  }
  said.querySelector("span").textContent = words;
}

document.addEventListener("htmx:sendError", (event) => {
  const card = event.detail.elt.closest && event.detail.elt.closest("article.question");
  if (card) sendFailed(card, "Not sent: the server could not be reached. What you wrote is kept here.");
});
document.addEventListener("htmx:responseError", (event) => {
  const card = event.detail.elt.closest && event.detail.elt.closest("article.question");
  // A refusal with a reason (409, 422) is no error here (base.html's htmx-config): it comes back as the card, its
  // message by the field. Anything else the server answered is said here.
  if (card) sendFailed(card, `Not sent: the server answered ${event.detail.xhr.status}. What you wrote is kept here.`);
});
document.addEventListener("htmx:afterRequest", (event) => {
  const card = event.detail.elt.closest && event.detail.elt.closest("article.question");
  const said = card && event.detail.successful && card.querySelector(".send-failed");
  if (said) said.remove();
});
document.addEventListener("click", (event) => {
  const retry = event.target.closest && event.target.closest(".retry-send");
  if (!retry) return;
  const card = retry.closest("article.question");
  const again = lastPressed.get(card);
  if (again && again.isConnected) again.click(); else send(card);
});

// The dashboard as an installable app: the service worker shows the offline page when the server is out of reach.
if ("serviceWorker" in navigator) {
  window.addEventListener("load", () => {
    const worker = document.querySelector('link[rel="manifest"]') && "/sw.js";
    if (worker) navigator.serviceWorker.register(worker).catch((error) => console.warn("No offline page:", error));
  });
}

// The triage list (issue 42): every waiting question as one row, beside the cards on a wide screen and instead of
// them on a phone, where a row opens its card full screen with Back. Rows are drawn from the cards' data and
// follow them: a push that adds, claims, reorders or removes a card changes only rows, so the card being read
// stays open and whatever is typed into a card stays there. Opening never sends; the card is where answers go.
const WIDE = window.matchMedia("(min-width: 64rem)");

function queueBox() { return document.getElementById("queue"); }

function rowLeft(card) {
  // The row's short countdown: "4 min", "40 s", or "gave up"; none once the agent stopped waiting.
  const line = card.querySelector(".countdown[data-deadline]");
  if (!line || line.hidden) return ["", ""];
  const seconds = (Date.parse(line.dataset.deadline) - Date.now()) / 1000;
  if (Number.isNaN(seconds)) return ["", ""];
  const text = seconds <= 0 ? "gave up" : seconds < 60 ? `${Math.floor(seconds)} s left` : `${Math.floor(seconds / 60)} min left`;
  // How urgent it is, as the card's own countdown already says (countDown): one rule for both.
  return [text, line.dataset.urgency || ""];
}

function rowFields(card) {
  const holder = card.querySelector(".claim-holder");
  return {
    asker: card.dataset.asker || "",
    host: card.dataset.host || "",
    kind: card.dataset.kindLabel || "",
    summary: card.dataset.summary || "",
    project: card.dataset.project || "",
    folder: card.dataset.folder || "",
    // An approval's row leads with what it would let happen (issue 55): the command itself, or the file.
    does: card.dataset.does || "",
    doesVerb: card.dataset.doesVerb || "",
    tool: card.dataset.tool || "",
    destructive: Boolean(card.querySelector(".destructive")),
    left: card.hasAttribute("data-left"),
    answering: holder ? holder.textContent.trim() : "",
  };
}

function span(className, text) {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  return element;
}

function drawRow(item, card) {
  const fields = rowFields(card);
  const drawn = JSON.stringify(fields);
  if (item.dataset.drawn !== drawn) {
    item.dataset.drawn = drawn;
    const button = item.querySelector("button");
    const who = span("row-who", "");
    who.append(span("row-asker", fields.asker));
    if (fields.host) who.append(span("row-host", ` in ${fields.host}`));
    const where = [fields.folder, fields.project].filter(Boolean);
    const top = span("row-line", "");
    const bottom = span("row-line", "");
    if (fields.does) {
      // The decision first: what runs (monospace, wrapped rather than cut), then who, where and how urgent.
      const does = span("row-does", "");
      if (fields.doesVerb !== "runs") does.append(span("row-verb", `${fields.doesVerb} `));
      does.append(span("row-command", fields.does));
      top.append(does);
      if (fields.destructive) top.append(span("badge row-destructive", "cannot be undone"));
      top.append(span("row-left", ""));
      // Who, the tool and where wrap rather than be cut (issue 55: "Claude C…", "def…" at 390 px).
      bottom.classList.add("row-meta");
      bottom.append(who, span("badge row-kind", fields.tool || fields.kind));
      if (where.length) bottom.append(span("row-where", where.join(" · ")));
    } else {
      top.append(who, span("badge row-kind", fields.kind));
      if (where.length) top.append(span("row-where", where.join(" · ")));
      top.append(span("row-left", ""));
      bottom.append(span("row-summary", fields.summary));
    }
    if (fields.left) bottom.append(span("row-stopped", "agent stopped waiting"));
    if (fields.answering) bottom.append(span("row-claim", fields.answering));
    button.replaceChildren(top, bottom);
  }
  const [left, urgency] = rowLeft(card);
  const leftSpan = item.querySelector(".row-left");
  if (leftSpan.textContent !== left) leftSpan.textContent = left;
  leftSpan.dataset.urgency = urgency;
}

function newRow(card) {
  const item = document.createElement("li");
  item.dataset.for = card.id;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "triage-row";
  button.dataset.for = card.id;
  button.setAttribute("aria-controls", card.id);
  // An approval this person may answer can be ticked for a batch decision (issue 42).
  if (card.dataset.kind === "approval" && card.querySelector("form")) {
    const label = document.createElement("label");
    label.className = "row-pick-label";
    const pick = document.createElement("input");
    pick.type = "checkbox";
    pick.className = "row-pick";
    pick.dataset.for = card.id;
    label.append(pick, span("visually-hidden", `Choose for a batch decision: ${card.dataset.summary || card.dataset.asker}`));
    item.append(label);
  }
  item.append(button);
  return item;
}

function selectedCard() {
  const queue = queueBox();
  const card = queue && queue.dataset.selected && document.getElementById(queue.dataset.selected);
  return card && card.matches("article.question") ? card : null;
}

function markSelection() {
  const queue = queueBox();
  if (!queue) return;
  for (const button of queue.querySelectorAll(".triage-row")) {
    const chosen = button.dataset.for === queue.dataset.selected;
    if (chosen) button.setAttribute("aria-current", "true"); else button.removeAttribute("aria-current");
  }
  for (const card of document.querySelectorAll("#question-list > article.question")) {
    card.classList.toggle("open", card.id === queue.dataset.open);
  }
}

let drawingRows = false;
function syncRows() {
  const queue = queueBox();
  const list = document.getElementById("triage-rows");
  if (!queue || !list || drawingRows) return;
  drawingRows = true;
  const shown = cards();
  const focused = document.activeElement;
  const existing = new Map([...list.children].map((item) => [item.dataset.for, item]));
  let expected = list.firstElementChild;
  for (const card of shown) {
    const item = existing.get(card.id) || newRow(card);
    existing.delete(card.id);
    drawRow(item, card);
    if (item === expected) expected = expected.nextElementSibling;
    else list.insertBefore(item, expected);
  }
  for (const gone of existing.values()) gone.remove();
  // A moved row takes the focus with it: a person moving through the list keeps their place.
  if (focused instanceof HTMLElement && focused !== document.activeElement && focused.isConnected) focused.focus({ preventScroll: true });
  // The selection stays on its question while it waits; on a wide screen one is always chosen, the first at first.
  const ids = shown.map((card) => card.id);
  if (!ids.includes(queue.dataset.selected)) {
    const wasOpen = queue.dataset.open && queue.dataset.open === queue.dataset.selected;
    queue.dataset.selected = WIDE.matches ? ids[0] || "" : "";
    if (wasOpen && !document.getElementById(queue.dataset.open)) leaveReading(queue);
  }
  if (WIDE.matches && !queue.dataset.open) queue.dataset.open = queue.dataset.selected || "";
  if (queue.dataset.open && !document.getElementById(queue.dataset.open)) leaveReading(queue);
  markSelection();
  showBatch();
  drawingRows = false;
}

// Batch decisions (issue 42): the bar says how many approvals are ticked; Allow… or Deny… opens a dialog that lists
// what each will run, and only its confirm button sends them (questions.views.decide_batch).
function ticked() { return [...document.querySelectorAll("#triage-rows .row-pick:checked")]; }

function showBatch() {
  const bar = document.querySelector(".batch-bar");
  if (!bar) return;
  const count = ticked().length;
  bar.hidden = count === 0;
  bar.querySelector(".batch-count").textContent = count === 1 ? "1 approval chosen" : `${count} approvals chosen`;
  // A rule is proposed from one approval: offered when exactly one is chosen.
  bar.querySelector("[data-rule-url]").hidden = count !== 1;
}

function proposeRule(button) {
  const [pick] = ticked();
  const card = pick && document.getElementById(pick.dataset.for);
  const dialog = document.getElementById("rule-dialog");
  if (!card || !dialog) return;
  const url = button.dataset.ruleUrl.replace("00000000-0000-0000-0000-000000000000", card.dataset.questionId);
  htmx.ajax("GET", url, { target: "#rule-proposal", swap: "outerHTML" }).then(() => dialog.showModal());
}

function whatItDoes(card) {
  // As the card says it (questions.kinds.approval.does): ["runs", "make deploy"], ["edits", "src/app.py"].
  return [card.dataset.doesVerb || "asks", card.dataset.does || card.dataset.summary || ""];
}

function confirmBatch(behavior) {
  const dialog = document.getElementById("batch-confirm");
  const chosen = ticked().map((pick) => document.getElementById(pick.dataset.for)).filter(Boolean);
  if (!dialog || !chosen.length) return;
  const form = dialog.querySelector("form");
  const verb = behavior === "allow" ? "Allow" : "Deny";
  const count = chosen.length === 1 ? "this approval" : `these ${chosen.length} approvals`;
  dialog.querySelector("#batch-title").textContent = `${verb} ${count}?`;
  const list = dialog.querySelector(".batch-list");
  list.replaceChildren(...chosen.map((card) => {
    const item = document.createElement("li");
    const who = document.createElement("strong");
    who.textContent = `${card.dataset.asker}${card.dataset.host ? ` in ${card.dataset.host}` : ""}`;
    const [verb, what] = whatItDoes(card);
    const code = document.createElement("code");
    code.textContent = what;
    item.append(who, ` ${verb} `, code);
    // The card's own warning (questions.kinds.approval.destructive) goes with it into the list.
    if (card.querySelector(".destructive")) {
      const warning = document.createElement("strong");
      warning.className = "batch-destructive";
      warning.textContent = " — cannot be undone";
      item.append(warning);
    }
    // An edit's diff, or what a write puts in its file, on demand: the list stays one line an approval.
    const change = card.querySelector("pre.tool-input.diff, pre.tool-input.write");
    if (change) {
      const more = document.createElement("details");
      const summary = document.createElement("summary");
      summary.textContent = change.classList.contains("diff") ? "Show the change" : "Show what it writes";
      const shown = change.cloneNode(true);
      shown.tabIndex = 0; // it scrolls past 16rem: the keyboard reaches it too
      more.append(summary, shown);
      item.append(more);
    }
    return item;
  }));
  for (const old of form.querySelectorAll("input[name=question]")) old.remove();
  for (const card of chosen) {
    const id = document.createElement("input");
    id.type = "hidden";
    id.name = "question";
    id.value = card.dataset.questionId;
    form.append(id);
  }
  form.querySelector("input[name=behavior]").value = behavior;
  form.querySelector(".batch-reason").hidden = behavior !== "deny";
  form.querySelector("textarea[name=message]").value = "";
  const send = form.querySelector("button[type=submit]");
  send.textContent = `${verb} ${chosen.length === 1 ? "it" : `all ${chosen.length}`}`;
  send.classList.toggle("danger", behavior === "deny");
  dialog.showModal();
}

document.addEventListener("change", (event) => {
  if (event.target.matches && event.target.matches(".row-pick")) showBatch();
});
document.addEventListener("click", (event) => {
  const target = event.target.closest ? event.target : null;
  if (!target) return;
  const batch = target.closest("[data-batch]");
  if (batch) confirmBatch(batch.dataset.batch);
  if (target.closest("[data-batch-cancel]")) document.getElementById("batch-confirm").close();
  const rule = target.closest("[data-rule-url]");
  if (rule) proposeRule(rule);
  if (target.closest("[data-rule-close]")) {
    document.getElementById("rule-dialog").close();
    if (document.querySelector("#rule-proposal[data-saved]")) { for (const pick of ticked()) pick.checked = false; showBatch(); }
  }
  if (target.closest("[data-batch-clear]")) { for (const pick of ticked()) pick.checked = false; showBatch(); }
  if (target.closest("[data-batch-session]")) {
    const sessions = new Set(ticked().map((pick) => (document.getElementById(pick.dataset.for) || {}).dataset?.session).filter(Boolean));
    for (const pick of document.querySelectorAll("#triage-rows .row-pick")) {
      const card = document.getElementById(pick.dataset.for);
      if (card && sessions.has(card.dataset.session)) pick.checked = true;
    }
    showBatch();
  }
});
// Sent: the dialog closes and the ticks go; the decided cards leave as every dashboard is told.
document.addEventListener("htmx:afterRequest", (event) => {
  const dialog = document.getElementById("batch-confirm");
  if (!dialog || !dialog.contains(event.detail.elt) || !event.detail.successful) return;
  dialog.close();
  for (const pick of ticked()) pick.checked = false;
  showBatch();
});

function leaveReading(queue) {
  queue.classList.remove("reading");
  // Closed by its card leaving (answered elsewhere): the step opening took goes too, so Back then leaves the list.
  if (history.state && history.state.reading) history.back();
  queue.dataset.open = WIDE.matches ? queue.dataset.selected || "" : "";
}

function openQuestion(card, focus) {
  const queue = queueBox();
  if (!queue || !card) return;
  queue.dataset.selected = card.id;
  queue.dataset.open = card.id;
  if (!WIDE.matches) {
    // The phone's Back closes the question, not the app (issue 55): opening one is a step in the history,
    // taken once however many questions are opened from it in turn.
    if (history.state && history.state.reading) history.replaceState({ reading: card.id }, "");
    else history.pushState({ reading: card.id }, "");
    queue.classList.add("reading");
  }
  markSelection();
  if (WIDE.matches) card.scrollIntoView({ block: "start" });
  else window.scrollTo({ top: queue.getBoundingClientRect().top + window.scrollY });
  if (focus) {
    card.setAttribute("tabindex", "-1");
    card.focus({ preventScroll: true });
  }
}

function closeQuestion() {
  // Back to the list, on the row of the question that was open; false when nothing was open to close.
  const queue = queueBox();
  if (!queue || !queue.dataset.open) return false;
  const reading = queue.classList.contains("reading");
  // Opened on a phone: the step opening took is taken back, and popstate closes it, as the system Back does.
  if (reading && history.state && history.state.reading) {
    history.back();
    return true;
  }
  return closeNow(queue, reading);
}

function closeNow(queue, reading) {
  const inCard = document.activeElement && document.activeElement.closest && document.activeElement.closest("#question-list");
  if (!reading && !inCard) return false;
  const id = queue.dataset.open;
  if (reading) leaveReading(queue);
  markSelection();
  const row = queue.querySelector(`.triage-row[data-for="${id}"]`);
  if (row) row.focus();
  return true;
}

window.addEventListener("popstate", () => {
  const queue = queueBox();
  if (queue && queue.dataset.open && queue.classList.contains("reading")) closeNow(queue, true);
});

function moveSelection(step) {
  const queue = queueBox();
  const rows = queue ? [...queue.querySelectorAll(".triage-row")] : [];
  if (!rows.length || (queue.classList.contains("reading") && !WIDE.matches)) return false;
  const index = rows.findIndex((row) => row.dataset.for === queue.dataset.selected);
  const next = rows[index < 0 ? 0 : Math.min(Math.max(index + step, 0), rows.length - 1)];
  queue.dataset.selected = next.dataset.for;
  markSelection();
  next.focus();
  next.scrollIntoView({ block: "nearest" });
  return true;
}

document.addEventListener("click", (event) => {
  const row = event.target.closest && event.target.closest(".triage-row");
  if (row) {
    const card = document.getElementById(row.dataset.for);
    if (card) openQuestion(card, true);
    return;
  }
  if (event.target.closest && event.target.closest("[data-back]")) closeQuestion();
});

// Rows follow every change to the cards: one redraw per frame, however many changes a push makes.
let rowsPending = false;
function rowsLater() {
  if (rowsPending) return;
  rowsPending = true;
  requestAnimationFrame(() => { rowsPending = false; syncRows(); });
}
document.addEventListener("DOMContentLoaded", () => {
  const list = document.getElementById("question-list");
  const queue = queueBox();
  if (!list || !queue) return;
  // The list itself is replaced by the state sent on each (re)connect: watch the pane it lives in.
  new MutationObserver(rowsLater).observe(queue.querySelector(".reading-pane"), { childList: true, subtree: true, attributes: true, attributeFilter: ["hidden", "style", "class", "data-expires"] });
  syncRows();
  WIDE.addEventListener("change", () => { queue.classList.remove("reading"); queue.dataset.open = ""; syncRows(); });
});
setInterval(() => {
  for (const item of document.querySelectorAll("#triage-rows > li")) {
    const card = document.getElementById(item.dataset.for);
    if (card) drawRow(item, card);
  }
}, 1000);

// An option's icon is the agent's text, usually an emoji: where this browser has no font for it, it would show as
// an empty box (issue 55), so it is left out; the option's title says it all anyway. A glyph is drawn if its
// pixels differ from those of a code point no font has (a private-use one).
const drawable = new Map();
function glyphDrawn(text) {
  if (!drawable.has(text)) {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 32;
    const context = canvas.getContext("2d", { willReadFrequently: true });
    if (!context) return true;
    const pixels = (glyph) => {
      context.clearRect(0, 0, 32, 32);
      context.font = "24px sans-serif";
      context.textBaseline = "top";
      context.fillText(glyph, 0, 0);
      return context.getImageData(0, 0, 32, 32).data.join(",");
    };
    const drawn = pixels(text);
    drawable.set(text, drawn !== pixels("\u{10FFFD}") && drawn !== pixels(" "));
  }
  return drawable.get(text);
}
function hideUndrawableIcons(root) {
  for (const icon of (root || document).querySelectorAll(".option-icon:not([data-checked])")) {
    icon.dataset.checked = "";
    if (!glyphDrawn(icon.textContent.trim())) icon.hidden = true;
  }
}
document.addEventListener("DOMContentLoaded", () => hideUndrawableIcons(document));
document.addEventListener("htmx:load", (event) => hideUndrawableIcons(event.target));
