// Shows whether the dashboard's live connection is up; htmx's ws extension reconnects by itself.
document.addEventListener("htmx:wsOpen", () => setConnection("live", "live"));
document.addEventListener("htmx:wsClose", () => setConnection("reconnecting", "reconnecting…"));

function setConnection(state, text) {
  const badge = document.getElementById("connection");
  if (badge) {
    badge.dataset.state = state;
    badge.textContent = text;
  }
}
