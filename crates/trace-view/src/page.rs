//! The page: `page.html` with its stylesheet, its script and the records put in. Everything
//! is inline (no network, no external asset); the records are one JSON array in a
//! `<script type="application/json">`, which the script parses once.
//!
//! The script is the files of `script/` one after the other, in one function scope that
//! `page.html` opens and closes: the model, the diagram, the side panel, the start.

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = concat!(
    include_str!("script/model.js"),
    "\n",
    include_str!("script/diagram.js"),
    "\n",
    include_str!("script/panel.js"),
    "\n",
    include_str!("script/start.js"),
);

/// What a served page needs to follow the file: where it asks for more records.
#[derive(Debug, Clone, Copy)]
pub struct LiveConfig {
    /// Which reading of the file the embedded records come from (the file was truncated
    /// or replaced when the server's generation differs).
    pub generation: u64,
    /// How many records the page holds, the `from` of its first request.
    pub next: usize,
}

/// The page for `records` (each one JSON object's text). `title` names the trace.
pub fn page(records: &[String], title: &str, live: Option<LiveConfig>) -> String {
    let data_len: usize = records.iter().map(|r| r.len() + 2).sum();
    let mut data = String::with_capacity(data_len + 2);
    data.push('[');
    for (i, record) in records.iter().enumerate() {
        if i > 0 {
            data.push_str(",\n");
        }
        push_script_safe(&mut data, record);
    }
    data.push(']');

    let config = match live {
        Some(live) => format!(
            r#"{{"live":{{"records":"records","generation":{},"next":{}}}}}"#,
            live.generation, live.next
        ),
        None => r#"{"live":null}"#.to_string(),
    };

    let mut html = String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + data.len());
    // The template's markers, in order; each is replaced once.
    let mut rest = TEMPLATE;
    for (marker, value) in [
        ("{{TITLE}}", html_escape(title)),
        ("/*{{STYLE}}*/", STYLE.to_string()),
        ("{{CONFIG}}", config),
        ("{{DATA}}", data),
        ("/*{{SCRIPT}}*/", SCRIPT.to_string()),
    ] {
        let at = rest
            .find(marker)
            .unwrap_or_else(|| panic!("page.html lacks {marker}"));
        html.push_str(&rest[..at]);
        html.push_str(&value);
        rest = &rest[at + marker.len()..];
    }
    html.push_str(rest);
    html
}

/// Appends JSON text so that it cannot end its `<script>` element: `<` only occurs inside
/// JSON strings, where `\u003c` means the same.
fn push_script_safe(out: &mut String, json: &str) {
    let mut last = 0;
    for (i, _) in json.match_indices('<') {
        out.push_str(&json[last..i]);
        out.push_str("\\u003c");
        last = i + 1;
    }
    out.push_str(&json[last..]);
}

fn html_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_cannot_close_the_script_element() {
        let records = vec![r#"{"payload":"</script><script>alert(1)</script><!--"}"#.to_string()];
        let html = page(&records, "t", None);
        let data_start = html.find(r#"id="trace-data""#).expect("data element");
        let data_end = data_start + html[data_start..].find("</script>").expect("closed");
        let data = &html[data_start..data_end];
        assert!(data.contains(r#"\u003c/script>\u003cscript>alert(1)\u003c/script>\u003c!--"#));
        // The JSON still means the same.
        let json_start = data.find('[').unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&data[json_start..]).unwrap();
        assert_eq!(
            parsed[0]["payload"],
            "</script><script>alert(1)</script><!--"
        );
    }

    #[test]
    fn the_page_is_self_contained() {
        let html = page(&[], "a <b> & c", None);
        assert!(html.contains("<title>a &lt;b&gt; &amp; c"));
        for marker in ["{{", "}}*/", "/*{{"] {
            assert!(!html.contains(marker), "a marker is left: {marker}");
        }
        // Nothing is fetched from elsewhere: no src/href to another place, no @import.
        for needle in ["src=", "href=\"http", "@import", "url("] {
            assert!(!html.contains(needle), "{needle} in the page");
        }
    }
}
