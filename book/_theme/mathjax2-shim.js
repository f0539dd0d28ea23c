// The ipywidgets embed bundle typesets widget labels through the MathJax 2 API
// (MathJax.Hub.Queue); this book loads MathJax 3, which has no Hub.  Whenever window.MathJax
// is set (by Sphinx's inline configuration, then by MathJax 3 itself), give it a MathJax 2
// shaped Hub.Queue that forwards to MathJax 3's typesetPromise.
(function () {
  function withHub(mj) {
    if (mj && typeof mj === "object" && !mj.Hub) {
      Object.defineProperty(mj, "Hub", {
        enumerable: false,
        value: {
          Queue: function (job) {
            var el = job && job[2];
            var M = window.MathJax;
            if (el && M && typeof M.typesetPromise === "function") {
              M.typesetPromise([el]).catch(function () {});
            }
          },
        },
      });
    }
    return mj;
  }
  var current = withHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (v) { current = withHub(v); },
  });
})();
