// A card's life on the page: toasts, the title's count, its arrival and removal, and claims.
// One module of the pages' script: ../hookbridge.js loads them all.
import { announce, showNotifyState, toggleShortcuts } from "./keyboard.js";
import { queueBox } from "./triage.js";

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
