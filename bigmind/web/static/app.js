// BigMind profile page: small conveniences only; every page works without this script.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // "/" focuses the search box, as on most sites.
  const search = document.querySelector("form.search input[type=search]");
  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && search && document.activeElement !== search &&
        !(document.activeElement instanceof HTMLInputElement)) {
      e.preventDefault();
      search.focus();
    }
  });
  // Changing a filter re-runs the search at once.
  document.querySelectorAll("form.search select").forEach((select) => {
    select.addEventListener("change", () => select.form.requestSubmit());
  });
  // A form posts once: a double click must not deprecate twice.
  document.querySelectorAll("form[method=post]").forEach((form) => {
    form.addEventListener("submit", () => {
      setTimeout(() => form.querySelectorAll("button").forEach((b) => { b.disabled = true; }), 0);
    });
  });
  // The notice after a change fades once read.
  const notice = document.querySelector(".notice");
  if (notice) setTimeout(() => notice.classList.add("faded"), 4000);
});
