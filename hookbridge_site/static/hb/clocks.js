// Ages that stay current, and countdowns to a question's deadline.
// One module of the pages' script: ../hookbridge.js loads them all.

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
