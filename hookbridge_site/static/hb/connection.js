// The live connection: its badge, a lost connection said above the questions, reconnecting.
// One module of the pages' script: ../hookbridge.js loads them all.

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
