// Batch decisions on ticked approvals, confirmed in a dialog.
// One module of the pages' script: ../hookbridge.js loads them all.

// Batch decisions (issue 42): the bar says how many approvals are ticked; Allow… or Deny… opens a dialog that lists
// what each will run, and only its confirm button sends them (questions.views.decide_batch).
function ticked() { return [...document.querySelectorAll("#triage-rows .row-pick:checked")]; }

export function showBatch() {
  const bar = document.querySelector(".batch-bar");
  if (!bar) return;
  const count = ticked().length;
  bar.hidden = count === 0;
  bar.querySelector(".batch-count").textContent = count === 1 ? "1 approval chosen" : `${count} approvals chosen`;
  // A rule is proposed from one approval: offered when exactly one is chosen.
  bar.querySelector("[data-rule-url]").hidden = count !== 1;
}

function proposeRule(button) {
  const [pick] = ticked();
  const card = pick && document.getElementById(pick.dataset.for);
  const dialog = document.getElementById("rule-dialog");
  if (!card || !dialog) return;
  const url = button.dataset.ruleUrl.replace("00000000-0000-0000-0000-000000000000", card.dataset.questionId);
  htmx.ajax("GET", url, { target: "#rule-proposal", swap: "outerHTML" }).then(() => dialog.showModal());
}

function whatItDoes(card) {
  // As the card says it (questions.kinds.approval.does): ["runs", "make deploy"], ["edits", "src/app.py"].
  return [card.dataset.doesVerb || "asks", card.dataset.does || card.dataset.summary || ""];
}

function confirmBatch(behavior) {
  const dialog = document.getElementById("batch-confirm");
  const chosen = ticked().map((pick) => document.getElementById(pick.dataset.for)).filter(Boolean);
  if (!dialog || !chosen.length) return;
  const form = dialog.querySelector("form");
  const verb = behavior === "allow" ? "Allow" : "Deny";
  const count = chosen.length === 1 ? "this approval" : `these ${chosen.length} approvals`;
  dialog.querySelector("#batch-title").textContent = `${verb} ${count}?`;
  const list = dialog.querySelector(".batch-list");
  list.replaceChildren(...chosen.map((card) => {
    const item = document.createElement("li");
    const who = document.createElement("strong");
    who.textContent = `${card.dataset.asker}${card.dataset.host ? ` in ${card.dataset.host}` : ""}`;
    const [verb, what] = whatItDoes(card);
    const code = document.createElement("code");
    code.textContent = what;
    item.append(who, ` ${verb} `, code);
    // The card's own warning (questions.kinds.approval.destructive) goes with it into the list.
    if (card.querySelector(".destructive")) {
      const warning = document.createElement("strong");
      warning.className = "batch-destructive";
      warning.textContent = " — cannot be undone";
      item.append(warning);
    }
    // An edit's diff, or what a write puts in its file, on demand: the list stays one line an approval.
    const change = card.querySelector("pre.tool-input.diff, pre.tool-input.write");
    if (change) {
      const more = document.createElement("details");
      const summary = document.createElement("summary");
      summary.textContent = change.classList.contains("diff") ? "Show the change" : "Show what it writes";
      const shown = change.cloneNode(true);
      shown.tabIndex = 0; // it scrolls past 16rem: the keyboard reaches it too
      more.append(summary, shown);
      item.append(more);
    }
    return item;
  }));
  for (const old of form.querySelectorAll("input[name=question]")) old.remove();
  for (const card of chosen) {
    const id = document.createElement("input");
    id.type = "hidden";
    id.name = "question";
    id.value = card.dataset.questionId;
    form.append(id);
  }
  form.querySelector("input[name=behavior]").value = behavior;
  form.querySelector(".batch-reason").hidden = behavior !== "deny";
  form.querySelector("textarea[name=message]").value = "";
  const send = form.querySelector("button[type=submit]");
  send.textContent = `${verb} ${chosen.length === 1 ? "it" : `all ${chosen.length}`}`;
  send.classList.toggle("danger", behavior === "deny");
  dialog.showModal();
}

document.addEventListener("change", (event) => {
  if (event.target.matches && event.target.matches(".row-pick")) showBatch();
});
document.addEventListener("click", (event) => {
  const target = event.target.closest ? event.target : null;
  if (!target) return;
  const batch = target.closest("[data-batch]");
  if (batch) confirmBatch(batch.dataset.batch);
  if (target.closest("[data-batch-cancel]")) document.getElementById("batch-confirm").close();
  const rule = target.closest("[data-rule-url]");
  if (rule) proposeRule(rule);
  if (target.closest("[data-rule-close]")) {
    document.getElementById("rule-dialog").close();
    if (document.querySelector("#rule-proposal[data-saved]")) { for (const pick of ticked()) pick.checked = false; showBatch(); }
  }
  if (target.closest("[data-batch-clear]")) { for (const pick of ticked()) pick.checked = false; showBatch(); }
  if (target.closest("[data-batch-session]")) {
    const sessions = new Set(ticked().map((pick) => (document.getElementById(pick.dataset.for) || {}).dataset?.session).filter(Boolean));
    for (const pick of document.querySelectorAll("#triage-rows .row-pick")) {
      const card = document.getElementById(pick.dataset.for);
      if (card && sessions.has(card.dataset.session)) pick.checked = true;
    }
    showBatch();
  }
});
// Sent: the dialog closes and the ticks go; the decided cards leave as every dashboard is told.
document.addEventListener("htmx:afterRequest", (event) => {
  const dialog = document.getElementById("batch-confirm");
  if (!dialog || !dialog.contains(event.detail.elt) || !event.detail.successful) return;
  dialog.close();
  for (const pick of ticked()) pick.checked = false;
  showBatch();
});
