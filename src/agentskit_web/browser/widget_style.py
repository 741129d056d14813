"""The widget's stylesheet, scoped by its shadow root.

Isolation works both ways: the host page's CSS cannot reach inside the
shadow root, and `:host { all: initial }` stops inherited page styles (fonts,
colours, line heights) from leaking in; nothing here can reach out.

Theming is through CSS custom properties, which *do* cross the shadow
boundary on purpose: a site sets `--ak-accent`, `--ak-bg`, `--ak-fg`,
`--ak-muted`, `--ak-border`, `--ak-surface`, `--ak-radius`, `--ak-font`,
`--ak-code-font` or `--ak-log-height` on `agentskit-ask` (or any ancestor).
Dark mode follows `prefers-color-scheme` unless the element's `theme`
attribute says `light` or `dark`.
"""

from typing import Final

_LIGHT: Final = """
  --_accent: var(--ak-accent, #2f6fdd);
  --_accent-fg: var(--ak-accent-fg, #ffffff);
  --_bg: var(--ak-bg, #ffffff);
  --_fg: var(--ak-fg, #1d2330);
  --_muted: var(--ak-muted, #4a5363);
  --_border: var(--ak-border, #c9ced6);
  --_surface: var(--ak-surface, #f3f5f8);
  --_user: var(--ak-user-bg, #e8f0fd);
  --_error-bg: var(--ak-error-bg, #fdf2f2);
  --_error-fg: var(--ak-error-fg, #8a1f1f);
  --_focus: var(--ak-focus, #1d2330);
"""

_DARK: Final = """
  --_accent: var(--ak-accent, #7aa7ff);
  --_accent-fg: var(--ak-accent-fg, #0d1320);
  --_bg: var(--ak-bg, #161a22);
  --_fg: var(--ak-fg, #e6e9ef);
  --_muted: var(--ak-muted, #a9b1c0);
  --_border: var(--ak-border, #39404d);
  --_surface: var(--ak-surface, #202632);
  --_user: var(--ak-user-bg, #23314d);
  --_error-bg: var(--ak-error-bg, #3a1d1f);
  --_error-fg: var(--ak-error-fg, #ffb4b4);
  --_focus: var(--ak-focus, #ffffff);
"""

WIDGET_CSS: Final = (
    """
:host {
  all: initial;
  display: block;
  box-sizing: border-box;
  max-width: var(--ak-max-width, 42rem);
  margin: 1.5rem 0;
  font: 1rem/1.5 var(--ak-font, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  color-scheme: light;
"""
    + _LIGHT
    + """
}
:host([hidden]) { display: none; }
@media (prefers-color-scheme: dark) {
  :host(:not([theme="light"])) {
    color-scheme: dark;
"""
    + _DARK
    + """
  }
}
:host([theme="dark"]) {
  color-scheme: dark;
"""
    + _DARK
    + """
}
*, *::before, *::after { box-sizing: border-box; }
.ak-widget {
  display: flex;
  flex-direction: column;
  gap: 0.6rem;
  padding: 1rem;
  border: 1px solid var(--_border);
  border-radius: var(--ak-radius, 0.5rem);
  background: var(--_bg);
  color: var(--_fg);
}
.ak-header { display: flex; align-items: center; gap: 0.5rem; }
.ak-heading { flex: 1; margin: 0; font-size: 1rem; font-weight: 600; }
button {
  padding: 0.45rem 0.85rem;
  border: 1px solid var(--_accent);
  border-radius: 0.375rem;
  background: var(--_accent);
  color: var(--_accent-fg);
  font: inherit;
  font-size: 0.95rem;
  cursor: pointer;
}
button:disabled { opacity: 0.55; cursor: not-allowed; }
button:focus-visible, a:focus-visible, textarea:focus-visible, .ak-log:focus-visible,
input:focus-visible, select:focus-visible {
  outline: 2px solid var(--_focus);
  outline-offset: 2px;
}
.ak-quiet, .ak-message-actions button, .ak-copy-code, .ak-suggestions button {
  border-color: var(--_border);
  background: transparent;
  color: var(--_fg);
}
.ak-quiet { padding: 0.3rem 0.6rem; font-size: 0.85rem; }
.ak-panel[hidden], .ak-form[hidden], [hidden] { display: none !important; }
.ak-log {
  display: flex;
  flex-direction: column;
  gap: 0.75rem;
  max-height: var(--ak-log-height, 28rem);
  overflow-y: auto;
  overscroll-behavior: contain;
  padding: 0.15rem;
}
.ak-log:empty { display: none; }
.ak-message { max-width: 100%; overflow-wrap: anywhere; }
.ak-user {
  align-self: flex-end;
  max-width: 85%;
  padding: 0.45rem 0.75rem;
  border-radius: 0.75rem 0.75rem 0.2rem 0.75rem;
  background: var(--_user);
}
.ak-user-text { margin: 0; white-space: pre-wrap; }
.ak-assistant { align-self: stretch; }
.ak-body > :first-child, .ak-segment > :first-child { margin-top: 0; }
.ak-body p, .ak-body ul, .ak-body ol, .ak-body blockquote, .ak-body table, .ak-codeblock {
  margin: 0 0 0.6rem;
}
.ak-body h1, .ak-body h2, .ak-body h3, .ak-body h4, .ak-body h5, .ak-body h6 {
  margin: 0.8rem 0 0.4rem;
  font-size: 1rem;
  line-height: 1.35;
}
.ak-body h1 { font-size: 1.2rem; }
.ak-body h2 { font-size: 1.1rem; }
.ak-body ul, .ak-body ol { padding-left: 1.4rem; }
.ak-body blockquote {
  padding-left: 0.75rem;
  border-left: 3px solid var(--_border);
  color: var(--_muted);
}
.ak-body a { color: var(--_accent); }
.ak-body img { max-width: 100%; height: auto; }
.ak-body hr { border: 0; border-top: 1px solid var(--_border); }
.ak-body code {
  padding: 0.05rem 0.25rem;
  border-radius: 0.25rem;
  background: var(--_surface);
  font: 0.88em/1.5 var(--ak-code-font, ui-monospace, SFMono-Regular, Menlo, monospace);
}
.ak-codeblock { position: relative; }
.ak-codeblock pre {
  margin: 0;
  padding: 2.1rem 0.75rem 0.75rem;
  overflow-x: auto;
  border-radius: 0.375rem;
  background: var(--_surface);
}
.ak-codeblock pre code { padding: 0; background: none; white-space: pre; }
.ak-copy-code {
  position: absolute;
  top: 0.35rem;
  right: 0.35rem;
  padding: 0.15rem 0.5rem;
  font-size: 0.8rem;
  background: var(--_bg);
}
.ak-body table { border-collapse: collapse; font-size: 0.92rem; }
.ak-body th, .ak-body td {
  padding: 0.3rem 0.55rem;
  border: 1px solid var(--_border);
  text-align: left;
}
.ak-body [data-align="center"] { text-align: center; }
.ak-body [data-align="right"] { text-align: right; }
.ak-table-scroll { overflow-x: auto; }
.ak-tail, .ak-plain { white-space: pre-wrap; }
.ak-assistant[data-status="streaming"] .ak-segment:last-child .ak-tail::after {
  content: "▍";
  margin-left: 0.1rem;
  color: var(--_muted);
  animation: ak-blink 1s steps(2, start) infinite;
}
.ak-thinking { margin: 0; color: var(--_muted); font-style: italic; }
.ak-component {
  margin: 0 0 0.6rem;
  padding: 0.6rem 0.75rem;
  border: 1px solid var(--_border);
  border-radius: 0.375rem;
  background: var(--_surface);
}
.ak-component .ak-label {
  display: block;
  margin: 0 0 0.35rem;
  font-weight: 600;
  font-size: 0.9rem;
}
.ak-source-list ul { margin: 0; padding: 0; list-style: none; display: grid; gap: 0.4rem; }
.ak-source-link, .ak-source-title { font-weight: 600; }
.ak-source-snippet { margin: 0.15rem 0 0; color: var(--_muted); font-size: 0.88rem; }
.ak-fallback {
  margin: 0 0 0.6rem;
  padding: 0.45rem 0.6rem;
  border: 1px dashed var(--_border);
  border-radius: 0.375rem;
  color: var(--_muted);
  font-size: 0.9rem;
  white-space: pre-wrap;
}
.ak-actions, .ak-message-actions, .ak-suggestions { display: flex; flex-wrap: wrap; gap: 0.35rem; }
.ak-message-actions button { padding: 0.2rem 0.55rem; font-size: 0.82rem; line-height: 1.3; }
.ak-message-actions svg { display: block; width: 1rem; height: 1.05rem; }
.ak-message-actions [aria-pressed="true"] {
  border-color: var(--_accent);
  background: var(--_accent);
  color: var(--_accent-fg);
}
.ak-assistant[data-status="streaming"] .ak-message-actions,
.ak-assistant[data-status="error"] .ak-regenerate,
:host([data-busy]) .ak-regenerate,
:host([data-busy]) .ak-retry-answer,
.ak-message:not(:last-child) .ak-regenerate,
.ak-message:not(:last-child) .ak-retry-answer { display: none; }
.ak-message-note { margin: 0 0 0.35rem; color: var(--_muted); font-size: 0.85rem; }
.ak-message-error {
  margin: 0 0 0.4rem;
  padding: 0.5rem 0.7rem;
  border: 1px solid var(--_error-fg);
  border-radius: 0.375rem;
  background: var(--_error-bg);
  color: var(--_error-fg);
}
.ak-message-error p { margin: 0 0 0.4rem; }
.ak-message-error button {
  border-color: var(--_error-fg);
  background: var(--_error-fg);
  color: var(--_error-bg);
}
.ak-suggestions button { padding: 0.3rem 0.65rem; border-radius: 999px; font-size: 0.88rem; }
.ak-form { display: flex; gap: 0.5rem; align-items: flex-end; margin: 0; }
.ak-input {
  flex: 1;
  min-width: 0;
  min-height: 2.4rem;
  max-height: 10rem;
  padding: 0.5rem 0.65rem;
  border: 1px solid var(--_border);
  border-radius: 0.375rem;
  background: var(--_bg);
  color: var(--_fg);
  font: inherit;
  resize: vertical;
}
.ak-stop { border-color: var(--_fg); background: var(--_fg); color: var(--_bg); }
.ak-status { margin: 0; min-height: 1.3em; color: var(--_muted); font-size: 0.85rem; }
.ak-disclaimer { margin: 0; color: var(--_muted); font-size: 0.78rem; }
.ak-field { display: flex; flex-direction: column; gap: 0.2rem; margin: 0 0 0.45rem; }
.ak-field-checkbox { flex-direction: row; align-items: center; }
.ak-description { display: block; color: var(--_muted); font-size: 0.88rem; }
.ak-json { margin: 0.3rem 0 0; white-space: pre-wrap; font-size: 0.85rem; }
.ak-visually-hidden {
  position: absolute;
  width: 1px;
  height: 1px;
  margin: -1px;
  padding: 0;
  overflow: hidden;
  clip: rect(0 0 0 0);
  white-space: nowrap;
  border: 0;
}
@keyframes ak-blink { to { visibility: hidden; } }
@media (prefers-reduced-motion: reduce) {
  .ak-assistant[data-status="streaming"] .ak-segment:last-child .ak-tail::after { animation: none; }
}
/* ---- issue 14 (hardening): begin ---- */
.ak-message-notfound { margin: 0.2rem 0; color: var(--_fg); }
.ak-retry-answer:disabled { opacity: 0.6; cursor: not-allowed; }
.ak-message { unicode-bidi: isolate; }
.ak-invisible {
  padding: 0 0.15em;
  border: 1px dashed currentColor;
  border-radius: 0.2em;
  color: inherit;
  font-style: italic;
  font-size: 0.85em;
}
.ak-invisible-warning { margin: 0 0 0.3rem; color: var(--_muted); font-size: 0.85rem; }
/* ---- issue 14 (hardening): end ---- */
"""
)
