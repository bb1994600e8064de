#pragma once
// The attention explorer page's style sheet and script, written into every page (no network:
// the page must open from a file anywhere). They are real files beside this header,
// attention_explorer.css and attention_explorer.js, which the build embeds as these functions'
// strings (apps/common/embed_text.cmake). The script reads the page's data — the JSON that
// attention_explorer_html puts in <script id="explorer-data"> — and draws everything from it.
// Plain JavaScript, no library; the colours are svg_canvas's viridis.
namespace uwaga::apps {

const char* attention_explorer_style();   // attention_explorer.css
const char* attention_explorer_script();  // attention_explorer.js

}  // namespace uwaga::apps
