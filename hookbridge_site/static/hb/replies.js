// Copy buttons, and reusable replies offered under every answer box.
// One module of the pages' script: ../hookbridge.js loads them all.

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
