//! Turning the report's outline into pages: one walk over the document
//! ([`document`]) told to each format's renderer, the self-contained HTML
//! page ([`html`]) and Markdown ([`markdown`]); inline SVG charts
//! ([`svg`], fed by [`charts`]) and escaping ([`escape`]).

pub mod charts;
pub mod document;
pub mod escape;
pub mod html;
pub mod markdown;
pub mod svg;
