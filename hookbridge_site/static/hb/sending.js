// A send that failed, said on the card with Retry; the installable app's service worker.
// One module of the pages' script: ../hookbridge.js loads them all.
import { send } from "./keyboard.js";

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
