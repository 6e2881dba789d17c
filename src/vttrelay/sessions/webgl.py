"""The WebGL shim a browser session's pages get before any of their scripts runs (the
reference's step 6): Foundry refuses a browser whose WebGL is software-rendered or missing, and a
headless chromium on a server has no GPU. The shim makes WebGL name an Intel/ANGLE renderer and,
where the browser gives no WebGL context at all, hands out a small stub context instead."""

from __future__ import annotations

from typing import Final

import orjson

VENDOR: Final = "Google Inc. (Intel)"
RENDERER: Final = "ANGLE (Intel, Intel(R) UHD Graphics 630, OpenGL 4.1)"

WEBGL_SHIM: Final = """(() => {
  const VENDOR = __VENDOR__, RENDERER = __RENDERER__;
  const UNMASKED_VENDOR = 0x9245, UNMASKED_RENDERER = 0x9246;
  for (const name of ["WebGLRenderingContext", "WebGL2RenderingContext"]) {
    const proto = globalThis[name] && globalThis[name].prototype;
    if (!proto) continue;
    const getParameter = proto.getParameter;
    proto.getParameter = function (what) {
      if (what === UNMASKED_VENDOR) return VENDOR;
      if (what === UNMASKED_RENDERER) return RENDERER;
      return getParameter.call(this, what);
    };
  }
  const stub = (canvas) => ({
    canvas, drawingBufferWidth: canvas.width, drawingBufferHeight: canvas.height,
    getParameter: (what) => what === UNMASKED_VENDOR ? VENDOR
      : what === UNMASKED_RENDERER ? RENDERER : null,
    getExtension: (name) => name === "WEBGL_debug_renderer_info"
      ? {UNMASKED_VENDOR_WEBGL: UNMASKED_VENDOR, UNMASKED_RENDERER_WEBGL: UNMASKED_RENDERER}
      : null,
    getSupportedExtensions: () => ["WEBGL_debug_renderer_info"],
    getContextAttributes: () => ({}),
    isContextLost: () => false,
  });
  const getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (kind, ...rest) {
    const context = getContext.call(this, kind, ...rest);
    if (context || !/^(webgl2?|experimental-webgl)$/.test(kind)) return context;
    return stub(this);
  };
})();""".replace("__VENDOR__", orjson.dumps(VENDOR).decode()).replace(
    "__RENDERER__", orjson.dumps(RENDERER).decode()
)
