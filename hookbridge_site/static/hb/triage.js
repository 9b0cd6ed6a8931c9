// The triage list: every waiting question as a row, and its card opened from it.
// One module of the pages' script: ../hookbridge.js loads them all.
import { showBatch } from "./batch.js";

// The triage list (issue 42): every waiting question as one row, beside the cards on a wide screen and instead of
// them on a phone, where a row opens its card full screen with Back. Rows are drawn from the cards' data and
// follow them: a push that adds, claims, reorders or removes a card changes only rows, so the card being read
// stays open and whatever is typed into a card stays there. Opening never sends; the card is where answers go.
const WIDE = window.matchMedia("(min-width: 64rem)");

export function queueBox() { return document.getElementById("queue"); }

// The waiting cards, in the order a person sees them (the keyboard's and the rows' order).
export function cards() {
  // In the order a person sees them: triage and grouping order cards with CSS (applyFilters).
  const all = [...document.querySelectorAll("#question-list > article.question:not(.closed)")].filter((card) => !card.hidden);
  return all.map((card, index) => [Number(card.style.order || 0), index, card]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((entry) => entry[2]);
}

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

export function selectedCard() {
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

function leaveReading(queue) {
  queue.classList.remove("reading");
  // Closed by its card leaving (answered elsewhere): the step opening took goes too, so Back then leaves the list.
  if (history.state && history.state.reading) history.back();
  queue.dataset.open = WIDE.matches ? queue.dataset.selected || "" : "";
}

export function openQuestion(card, focus) {
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

export function closeQuestion() {
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

export function moveSelection(step) {
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
