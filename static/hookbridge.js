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

// A toast that has faded out leaves the page, so toasts do not pile up.
document.addEventListener("animationend", (event) => {
  if (event.target.classList && event.target.classList.contains("toast")) {
    event.target.remove();
  }
});
