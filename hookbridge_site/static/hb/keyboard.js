// Notifications of a new question, and answering from the keyboard.
// One module of the pages' script: ../hookbridge.js loads them all.
import { cards, closeQuestion, moveSelection, openQuestion, selectedCard } from "./triage.js";

// Opt-in browser notifications and a short sound when a question arrives.
function notifyEnabled() {
  return localStorage.getItem("hookbridge-notify") === "on" && "Notification" in window
    && Notification.permission === "granted";
}

export function showNotifyState() {
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

export function announce(card) {
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

export function send(card) {
  const form = card.querySelector("form");
  const button = form && (form.querySelector("button.primary") || form.querySelector("button[type=submit]"));
  // A click, not requestSubmit(): htmx takes the pressed button's name and value (completionStatus) from it.
  if (button && !button.disabled) button.click();
}

export function toggleShortcuts() {
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
