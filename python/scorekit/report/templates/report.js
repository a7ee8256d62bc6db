"use strict";
(function () {
  function key(cell) {
    var v = cell.getAttribute("data-value");
    return v === null ? cell.textContent : parseFloat(v);
  }
  function compare(a, b, sign) {
    if (typeof a === "number" && typeof b === "number") {
      if (isNaN(a)) { return isNaN(b) ? 0 : 1; }
      if (isNaN(b)) { return -1; }
      return sign * (a - b);
    }
    return sign * (String(a) < String(b) ? -1 : (String(a) > String(b) ? 1 : 0));
  }
  function sortTable(table, col, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      return compare(key(r1.cells[col]), key(r2.cells[col]), descending ? -1 : 1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === col) { th.setAttribute("aria-sort", descending ? "descending" : "ascending"); }
      else { th.removeAttribute("aria-sort"); }
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      var button = th.querySelector("button");
      button.addEventListener("click", function () {
        sortTable(table, col, th.getAttribute("aria-sort") === "ascending");
      });
    });
    var initial = table.getAttribute("data-sort-col");
    if (initial !== null) {
      sortTable(table, parseInt(initial, 10), table.getAttribute("data-sort-dir") === "descending");
    }
  });
  document.body.setAttribute("data-script-ran", "1");
})();
