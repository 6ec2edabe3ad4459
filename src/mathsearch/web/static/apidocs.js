// The API page (/docs): Swagger UI over the server's own /openapi.json. A file, not an inline
// script, as the Content-Security-Policy wants; no validator badge (it would call swagger.io).
"use strict";
(function () {
  function start() {
    const box = document.getElementById("swagger-ui");
    if (!box || !window.SwaggerUIBundle) return;
    window.SwaggerUIBundle({
      url: box.dataset.url || "/openapi.json",
      dom_id: "#swagger-ui",
      deepLinking: true,
      validatorUrl: null,
      tryItOutEnabled: false,
      onComplete: () => document.documentElement.setAttribute("data-api", "ready"),
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
