//! [`fixture_repo`]: the multi-language repository most tests search, and the files in it.

use super::{MAX_FILE_BYTES, Repo, git_repo};

/// Words that occur only in files the indexer must skip: a query for any of them finds nothing.
pub const BINARY_ONLY_WORD: &str = "quokkabinaryword";
pub const HUGE_ONLY_WORD: &str = "quokkahugeword";
pub const LATIN1_ONLY_WORD: &str = "quokkalatinword";

/// The paths of the fixture's files that must be skipped, by reason.
/// Four small files of distinct meanings (temperatures, reading lines, sending mail, sorting): what
/// the tests of vectors that travel between daemons (snapshots, a team's store) embed.
pub const FOUR_MEANINGS: &[(&str, &[u8])] = &[
    (
        "temperature.py",
        b"def celsius_to_fahrenheit(c):\n    \"\"\"Degrees C to degrees F.\"\"\"\n    return c * 9 / 5 + 32\n",
    ),
    (
        "lines.py",
        b"def read_lines(path):\n    with open(path) as f:\n        return f.read().splitlines()\n",
    ),
    (
        "mail.py",
        b"import smtplib\n\ndef send_email(to, subject, body):\n    server = smtplib.SMTP('localhost')\n    server.sendmail('me@example.com', [to], subject + '\\n' + body)\n",
    ),
    (
        "src/sort.rs",
        b"/// Sort in place, smallest first.\npub fn bubble_sort(v: &mut [i32]) {\n    for i in 0..v.len() {\n        for j in 0..v.len() - i - 1 {\n            if v[j] > v[j + 1] { v.swap(j, j + 1); }\n        }\n    }\n}\n",
    ),
];

pub const BINARY_FILE: &str = "assets/logo.png";
pub const HUGE_FILE: &str = "data/huge.txt";
pub const LATIN1_FILE: &str = "legacy/latin1.txt";

/// A small multi-language repository:
///
/// - `src/args.rs` defines `pub fn parse_args`; `src/main.rs`, `app/cli.py`, `web/app.js`,
///   `server/main.go` and `README.md` call or mention it (callers the definition must outrank).
/// - `src/http.rs` defines `struct HttpClient` and its methods; `web/client.ts` a class `ApiClient`.
/// - Java, C and C++ files, a `README.md` with headings and a `config.toml`.
/// - Three files the indexer must skip: [`BINARY_FILE`] (NUL bytes), [`HUGE_FILE`] (~100 KB, above
///   [`MAX_FILE_BYTES`]) and [`LATIN1_FILE`] (invalid UTF-8).
pub fn fixture_repo() -> Repo {
    let mut binary = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10".to_vec();
    binary.extend_from_slice(BINARY_ONLY_WORD.as_bytes());
    binary.extend_from_slice(&[0, 1, 2, 3, 0, 0, 255, 254]);
    let huge: String = (0..2000)
        .map(|i| format!("line {i:05} {HUGE_ONLY_WORD} padding text here\n"))
        .collect();
    assert!(
        huge.len() as u64 > MAX_FILE_BYTES + 16 * 1024,
        "the huge file must exceed the limit"
    );
    let mut latin1 = b"caf\xe9 cr\xe8me br\xfbl\xe9e ".to_vec();
    latin1.extend_from_slice(LATIN1_ONLY_WORD.as_bytes());
    latin1.push(b'\n');
    git_repo(&[
        ("src/args.rs", ARGS_RS.as_bytes()),
        ("src/main.rs", MAIN_RS.as_bytes()),
        ("src/http.rs", HTTP_RS.as_bytes()),
        ("app/cli.py", CLI_PY.as_bytes()),
        ("app/models.py", MODELS_PY.as_bytes()),
        ("web/app.js", APP_JS.as_bytes()),
        ("web/client.ts", CLIENT_TS.as_bytes()),
        ("server/main.go", MAIN_GO.as_bytes()),
        ("java/Inventory.java", INVENTORY_JAVA.as_bytes()),
        ("native/checksum.c", CHECKSUM_C.as_bytes()),
        ("native/matrix.cpp", MATRIX_CPP.as_bytes()),
        ("README.md", README_MD.as_bytes()),
        ("config.toml", CONFIG_TOML.as_bytes()),
        (BINARY_FILE, &binary),
        (HUGE_FILE, huge.as_bytes()),
        (LATIN1_FILE, &latin1),
    ])
}

const ARGS_RS: &str = r#"//! Command-line options.

use std::collections::HashMap;

/// Options given on the command line.
pub struct Options {
    pub verbose: bool,
    pub values: HashMap<String, String>,
}

/// Turn `--key=value` pairs and `-v` into [`Options`].
pub fn parse_args(args: &[String]) -> Options {
    let mut opts = Options { verbose: false, values: HashMap::new() };
    for arg in args {
        if arg == "-v" {
            opts.verbose = true;
        } else if let Some((key, value)) = arg.trim_start_matches("--").split_once('=') {
            opts.values.insert(key.to_string(), value.to_string());
        }
    }
    opts
}
"#;

const MAIN_RS: &str = r#"mod args;
mod http;

use http::HttpClient;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    // parse_args never fails: unknown flags are kept as values.
    let opts = args::parse_args(&argv);
    let client = HttpClient::new(opts.values.get("url").cloned().unwrap_or_default());
    println!("{}", client.get("/status"));
}

fn reload(argv: &[String]) -> bool {
    let again = args::parse_args(argv);
    let twice = args::parse_args(argv);
    again.verbose == twice.verbose
}
"#;

const HTTP_RS: &str = r#"//! A tiny HTTP client.

/// Sends requests to one base URL.
pub struct HttpClient {
    base_url: String,
    timeout_ms: u64,
}

impl HttpClient {
    pub fn new(base_url: String) -> HttpClient {
        HttpClient { base_url, timeout_ms: 5_000 }
    }

    pub fn get(&self, path: &str) -> String {
        format!("GET {}{} (timeout {} ms)", self.base_url, path, self.timeout_ms)
    }

    pub fn post(&self, path: &str, body: &str) -> String {
        format!("POST {}{} {}", self.base_url, path, body)
    }
}
"#;

const CLI_PY: &str = r#""""Command-line entry point."""
import sys

from app.models import User


def run(argv):
    # Same flags as the Rust binary: parse_args is the reference implementation.
    options = parse_args_compat(argv)
    return User(options.get("name", "anonymous"))


def parse_args_compat(argv):
    """Mirror of parse_args in src/args.rs; calls parse_args semantics."""
    result = {}
    for arg in argv:
        if "=" in arg:
            key, value = arg.lstrip("-").split("=", 1)
            result[key] = value
    return result


if __name__ == "__main__":
    print(run(sys.argv[1:]))
"#;

const MODELS_PY: &str = r#"class User:
    """A user of the service."""

    def __init__(self, name):
        self.name = name

    def greeting(self):
        return f"hello {self.name}"


def load_users(path):
    with open(path) as f:
        return [User(line.strip()) for line in f]
"#;

const APP_JS: &str = r#"// Browser entry point.
import { ApiClient } from "./client";

function startApp(argv) {
  // The server parses its flags with parse_args; we only forward them.
  const forwarded = argv.map((a) => `--${a}`);
  const api = new ApiClient("/api");
  return api.fetchUsers(forwarded);
}

export { startApp };
"#;

const CLIENT_TS: &str = r#"export interface User {
  id: number;
  name: string;
}

export class ApiClient {
  constructor(private baseUrl: string) {}

  async fetchUsers(flags: string[]): Promise<User[]> {
    const res = await fetch(`${this.baseUrl}/users?${flags.join("&")}`);
    return res.json();
  }
}
"#;

const MAIN_GO: &str = r#"package main

import (
	"fmt"
	"os"
)

// handleRequest answers one request; flags come from parse_args in the Rust tool.
func handleRequest(path string) string {
	return fmt.Sprintf("ok %s", path)
}

func main() {
	fmt.Println(handleRequest(os.Args[0]))
}
"#;

const INVENTORY_JAVA: &str = r#"package fixture;

import java.util.HashMap;
import java.util.Map;

public class Inventory {
    private final Map<String, Integer> stock = new HashMap<>();

    public void restock(String item, int count) {
        stock.merge(item, count, Integer::sum);
    }

    public int available(String item) {
        return stock.getOrDefault(item, 0);
    }
}
"#;

const CHECKSUM_C: &str = r#"#include <stddef.h>
#include <stdint.h>

/* Adler-32 checksum of a buffer. */
uint32_t adler32_checksum(const unsigned char *data, size_t len) {
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < len; i++) {
        a = (a + data[i]) % 65521;
        b = (b + a) % 65521;
    }
    return (b << 16) | a;
}
"#;

const MATRIX_CPP: &str = r#"#include <vector>

namespace linalg {

class Matrix {
public:
    Matrix(int rows, int cols) : rows_(rows), cols_(cols), data_(rows * cols) {}

    double trace() const {
        double t = 0;
        for (int i = 0; i < rows_ && i < cols_; ++i) t += data_[i * cols_ + i];
        return t;
    }

private:
    int rows_, cols_;
    std::vector<double> data_;
};

}  // namespace linalg
"#;

const README_MD: &str = r#"# Fixture project

A small project used by Patina's end-to-end tests.

## Usage

Run the binary with `--key=value` flags; `parse_args` turns them into options,
and every caller of parse_args gets the same view of the command line.

## Configuration

Settings live in `config.toml` next to this file.
"#;

const CONFIG_TOML: &str = r#"[server]
host = "127.0.0.1"
port = 8080

[client]
retries = 3
"#;
