//! Turning the report's outline into pages: the self-contained HTML page
//! ([`html`]), Markdown ([`markdown`]), inline SVG charts ([`svg`], fed by
//! [`charts`]) and escaping ([`escape`]).

pub mod charts;
pub mod escape;
pub mod html;
pub mod markdown;
pub mod svg;
