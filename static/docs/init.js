// Starts Swagger UI on this service's own description. Everything it loads comes from this
// service: no validator badge (validatorUrl: null), no CDN.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
});
