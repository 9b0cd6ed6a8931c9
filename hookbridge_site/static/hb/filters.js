// The queue's filters and grouping, kept in the URL.
// One module of the pages' script: ../hookbridge.js loads them all.

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
