//! The context's timeline option (dist_context_options_t.timeline) on a one-rank context.
use std::fs;
use std::path::PathBuf;

use distribute::{sys, Cluster, Context, ContextOptions, Op};

/// A JSON value: the crate has no dependencies, so the test reads the file with
/// the small parser below rather than a JSON crate.
#[derive(Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn str(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Json::Str(s)) => Some(s),
            _ => None,
        }
    }
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    /// The whole text as one value; anything but whitespace after it is an error.
    fn parse(text: &str) -> Result<Json, String> {
        let mut p = Parser { text: text.as_bytes(), at: 0 };
        let value = p.value()?;
        p.skip_space();
        if p.at != p.text.len() {
            return Err(format!("trailing text at byte {}", p.at));
        }
        Ok(value)
    }

    fn skip_space(&mut self) {
        while self.at < self.text.len() && self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Result<u8, String> {
        self.skip_space();
        self.text.get(self.at).copied().ok_or_else(|| "unexpected end of the text".to_string())
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek()? != byte {
            return Err(format!("expected '{}' at byte {}", byte as char, self.at));
        }
        self.at += 1;
        Ok(())
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if !self.text[self.at..].starts_with(word.as_bytes()) {
            return Err(format!("bad literal at byte {}", self.at));
        }
        self.at += word.len();
        Ok(value)
    }

    fn value(&mut self) -> Result<Json, String> {
        match self.peek()? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                if self.peek()? == b'}' {
                    self.at += 1;
                    return Ok(Json::Object(members));
                }
                loop {
                    let key = self.string()?;
                    self.expect(b':')?;
                    members.push((key, self.value()?));
                    match self.peek()? {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Ok(Json::Object(members));
                        }
                        _ => return Err(format!("expected ',' or '}}' at byte {}", self.at)),
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.peek()? == b']' {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Ok(Json::Array(items));
                        }
                        _ => return Err(format!("expected ',' or ']' at byte {}", self.at)),
                    }
                }
            }
            b'"' => Ok(Json::Str(self.string()?)),
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            _ => {
                let start = self.at;
                while self.at < self.text.len() && matches!(self.text[self.at], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    self.at += 1;
                }
                let number = std::str::from_utf8(&self.text[start..self.at]).unwrap();
                number.parse().map(Json::Number).map_err(|_| format!("bad value at byte {start}"))
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut bytes = Vec::new();
        loop {
            let byte = *self.text.get(self.at).ok_or("unterminated string")?;
            self.at += 1;
            match byte {
                b'"' => return String::from_utf8(bytes).map_err(|e| e.to_string()),
                b'\\' => {
                    let escape = *self.text.get(self.at).ok_or("unterminated escape")?;
                    self.at += 1;
                    let c = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hex = self.text.get(self.at..self.at + 4).ok_or("short \\u escape")?;
                            self.at += 4;
                            let code = u32::from_str_radix(std::str::from_utf8(hex).unwrap(), 16).map_err(|e| e.to_string())?;
                            // A lone surrogate half is not a char; the test never needs one.
                            char::from_u32(code).unwrap_or('\u{fffd}')
                        }
                        _ => return Err(format!("bad escape at byte {}", self.at)),
                    };
                    bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                _ => bytes.push(byte),
            }
        }
    }
}

#[test]
fn the_parser_reads_json() {
    let parsed = Parser::parse(r#" [{"a": [1, -2.5e1, true, null], "b\"\u0041": "x\ny"}, {}] "#).unwrap();
    let expected = Json::Array(vec![
        Json::Object(vec![
            ("a".into(), Json::Array(vec![Json::Number(1.0), Json::Number(-25.0), Json::Bool(true), Json::Null])),
            ("b\"A".into(), Json::Str("x\ny".into())),
        ]),
        Json::Object(vec![]),
    ]);
    assert_eq!(parsed, expected);
    assert!(Parser::parse("[1,").is_err());
    assert!(Parser::parse("[1] x").is_err());
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dist-rust-timeline-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn with_timeline(timeline: PathBuf) -> distribute::Result<(Cluster, Context)> {
    let cluster = Cluster::from_json("{}").expect("empty cluster");
    let options = ContextOptions { timeline: Some(timeline), ..ContextOptions::default() };
    let context = Context::new(&cluster, &options)?;
    Ok((cluster, context))
}

#[test]
fn a_timeline_records_the_collectives() {
    let dir = scratch("records");
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    {
        let (_cluster, context) = with_timeline(dir.join("run")).unwrap();
        let world = context.world().unwrap();
        let mut out = [0f32; 5];
        world.all_reduce(&data, &mut out, Op::Sum).unwrap();
        assert_eq!(out, data);
        world.barrier().unwrap();
    } // the world, then the context: the file's array is closed
    let text = fs::read_to_string(dir.join("run.0.json")).unwrap();
    let Json::Array(events) = Parser::parse(&text).unwrap_or_else(|e| panic!("{e}:\n{text}")) else {
        panic!("not an array:\n{text}")
    };
    let metadata: Vec<_> = events.iter().filter(|e| e.str("name") == Some("libdistribute")).collect();
    assert_eq!(metadata.len(), 1, "{text}");
    assert_eq!(metadata[0].str("ph"), Some("M"));
    assert_eq!(metadata[0].get("args").and_then(|a| a.get("rank")), Some(&Json::Number(0.0)));
    let calls: Vec<_> = events.iter().filter(|e| e.str("name") == Some("all_reduce")).collect();
    assert_eq!(calls.len(), 1, "{text}");
    let (call, args) = (calls[0], calls[0].get("args").unwrap());
    assert_eq!((call.str("cat"), call.str("ph")), (Some("collective"), Some("X")));
    assert_eq!(args.get("bytes"), Some(&Json::Number((data.len() * 4) as f64)));
    assert_eq!((args.str("path"), args.str("dtype")), (Some("self"), Some("f32")));
    assert!(events.iter().any(|e| e.str("name") == Some("barrier") && e.str("cat") == Some("collective")));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_empty_timeline_is_refused() {
    let error = with_timeline(PathBuf::new()).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains("timeline is empty"), "{error}");
}

#[test]
fn a_timeline_in_a_missing_directory_names_the_file() {
    let prefix = std::env::temp_dir().join(format!("dist-rust-timeline-missing-{}", std::process::id())).join("run");
    let error = with_timeline(prefix.clone()).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains(&format!("cannot create '{}.0.json'", prefix.display())), "{error}");
}
