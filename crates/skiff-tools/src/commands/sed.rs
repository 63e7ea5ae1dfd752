//! `sed`: its options, and its script parsed as GNU sed parses it, so that a script that runs a
//! program (`e`, `s///e`), writes a file (`w`, `W`, `s///w`) or reads one (`r`, `R`) is never
//! taken for a harmless one. With `-i` it edits its files (and writes backups).

use super::options::Table;
use super::{Effects, Kind};

static SED: Table = Table {
    short: "nErsuze=f!i?l=b",
    long: &[
        "quiet",
        "silent",
        "debug",
        "expression=",
        "file!",
        "follow-symlinks",
        "in-place?",
        "line-length=",
        "null-data",
        "zero-terminated",
        "posix",
        "regexp-extended",
        "separate",
        "sandbox",
        "unbuffered",
        "binary",
        "help",
        "version",
    ],
    numeric: false,
};

/// What `sed ARGS` does.
pub(super) fn effects(args: &[String]) -> Effects {
    let p = match SED.parse(args) {
        Ok(p) => p,
        Err(why) => return Effects::unknown(format!("sed: {why}")),
    };
    if p.forbidden().is_some() {
        return Effects::unknown("sed -f reads its script from a file");
    }
    let scripts: Vec<&str> = p.values(&["e", "expression"]).collect();
    let mut operands = p.operands.iter();
    let script = if scripts.is_empty() {
        match operands.next() {
            Some(s) => s.clone(),
            None => return Effects::unknown("sed without a script"),
        }
    } else {
        scripts.join("\n")
    };
    if let Err(why) = check_script(&script) {
        return Effects::unknown(format!("sed: {why}"));
    }
    let files: Vec<String> = operands.filter(|f| *f != "-").cloned().collect();
    let in_place = p
        .options
        .iter()
        .find(|o| o.name == "i" || o.name == "in-place");
    let mut e = Effects::new(if in_place.is_some() {
        Kind::Edits
    } else {
        Kind::ReadOnly
    });
    e.reads.extend(files.iter().cloned());
    if let Some(opt) = in_place {
        let suffix = opt.value.as_deref().unwrap_or("");
        if suffix.contains(['/', '*']) {
            return Effects::unknown("sed -i with a backup name that can point elsewhere");
        }
        if files.is_empty() {
            return Effects::unknown("sed -i without files");
        }
        for f in &files {
            e.writes.push(f.clone());
            if !suffix.is_empty() {
                e.writes.push(format!("{f}{suffix}"));
            }
        }
    }
    e
}

/// Parse a script; `Err` names the first thing that is not plain text processing (or that does
/// not parse).
pub(super) fn check_script(script: &str) -> Result<(), String> {
    let mut p = Parser {
        s: script.chars().collect(),
        i: 0,
    };
    p.script()
}

struct Parser {
    s: Vec<char>,
    i: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek();
        self.i += 1;
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn script(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.i += 1;
            }
            let Some(c) = self.peek() else {
                return if depth == 0 {
                    Ok(())
                } else {
                    Err("unmatched `{`".into())
                };
            };
            if c == '#' {
                self.skip_line();
                continue;
            }
            if c == '}' {
                self.i += 1;
                depth = depth.checked_sub(1).ok_or("unexpected `}`")?;
                self.end_of_command()?;
                continue;
            }
            self.addresses()?;
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.i += 1;
                self.skip_blanks();
            }
            let cmd = self.bump().ok_or("missing command")?;
            match cmd {
                '{' => {
                    depth += 1;
                    continue;
                }
                '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
                | 'F' => {}
                'l' | 'L' | 'q' | 'Q' => {
                    self.skip_blanks();
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                }
                ':' => {
                    self.skip_blanks();
                    let start = self.i;
                    while self.peek().is_some_and(|c| c != '\n' && c != ';') {
                        self.i += 1;
                    }
                    if self.i == start {
                        return Err("`:` without a label".into());
                    }
                }
                'b' | 't' | 'T' | 'v' => {
                    while self
                        .peek()
                        .is_some_and(|c| c != '\n' && c != ';' && c != '}')
                    {
                        self.i += 1;
                    }
                }
                'a' | 'i' | 'c' => self.text()?,
                's' => self.substitute()?,
                'y' => {
                    let delim = self.delimiter()?;
                    self.until(delim)?;
                    self.until(delim)?;
                }
                'e' => return Err("its `e` command runs a program".into()),
                'w' | 'W' => return Err("its `w` command writes a file".into()),
                'r' | 'R' => return Err("its `r` command reads a file".into()),
                other => return Err(format!("unknown command `{other}`")),
            }
            self.end_of_command()?;
        }
    }

    fn end_of_command(&mut self) -> Result<(), String> {
        self.skip_blanks();
        match self.peek() {
            None | Some(';' | '\n' | '}') => Ok(()),
            Some('#') => {
                self.skip_line();
                Ok(())
            }
            Some(c) => Err(format!("unexpected `{c}` after a command")),
        }
    }

    fn skip_line(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.i += 1;
        }
    }

    fn addresses(&mut self) -> Result<(), String> {
        if !self.address()? {
            return Ok(());
        }
        self.skip_blanks();
        if self.peek() == Some(',') {
            self.i += 1;
            self.skip_blanks();
            if matches!(self.peek(), Some('+' | '~')) {
                self.i += 1;
                self.number()?;
            } else if !self.address()? {
                return Err("missing address after `,`".into());
            }
        }
        Ok(())
    }

    fn number(&mut self) -> Result<(), String> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if self.i == start {
            Err("expected a number".into())
        } else {
            Ok(())
        }
    }

    /// One address, if there is one.
    fn address(&mut self) -> Result<bool, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.number()?;
                if self.peek() == Some('~') {
                    self.i += 1;
                    self.number()?;
                }
            }
            Some('$') => self.i += 1,
            Some('/') => {
                self.i += 1;
                self.regex('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.i += 1;
                let delim = self.bump().ok_or("missing delimiter")?;
                self.regex(delim)?;
                self.regex_flags();
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.i += 1;
        }
    }

    fn delimiter(&mut self) -> Result<char, String> {
        match self.bump() {
            Some('\n' | '\\') | None => Err("bad delimiter".into()),
            Some(c) => Ok(c),
        }
    }

    /// A regular expression up to and past an unescaped `delim`; as GNU sed, a bracket
    /// expression (`[/]`) may hold the delimiter, and a backslash in it is literal.
    fn regex(&mut self, delim: char) -> Result<(), String> {
        loop {
            match self.bump() {
                None => return Err("unterminated expression".into()),
                Some('\\') => {
                    self.bump().ok_or("unterminated expression")?;
                }
                Some('[') => self.bracket()?,
                Some(c) if c == delim => return Ok(()),
                Some(_) => {}
            }
        }
    }

    fn bracket(&mut self) -> Result<(), String> {
        if self.peek() == Some('^') {
            self.i += 1;
        }
        if self.peek() == Some(']') {
            self.i += 1;
        }
        loop {
            match self.bump() {
                None => return Err("unterminated bracket expression".into()),
                Some('[') if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    let kind = self.bump().unwrap_or(':');
                    loop {
                        match self.bump() {
                            None => return Err("unterminated character class".into()),
                            Some(c) if c == kind && self.peek() == Some(']') => {
                                self.i += 1;
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                Some(']') => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// Up to and past an unescaped `delim`.
    fn until(&mut self, delim: char) -> Result<(), String> {
        loop {
            match self.bump() {
                None => return Err("unterminated expression".into()),
                Some('\\') => {
                    self.bump().ok_or("unterminated expression")?;
                }
                Some(c) if c == delim => return Ok(()),
                Some(_) => {}
            }
        }
    }

    fn substitute(&mut self) -> Result<(), String> {
        let delim = self.delimiter()?;
        self.regex(delim)?;
        self.until(delim)?;
        while let Some(c) = self.peek() {
            match c {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' => self.i += 1,
                c if c.is_ascii_digit() => self.i += 1,
                'e' => return Err("its `s///e` runs the pattern space as a command".into()),
                'w' => return Err("its `s///w` writes a file".into()),
                _ => break,
            }
        }
        Ok(())
    }

    /// The text of `a`, `i`, `c`: to the end of the line, lines ending in `\` continuing it.
    fn text(&mut self) -> Result<(), String> {
        loop {
            match self.bump() {
                None => return Ok(()),
                Some('\\') => {
                    self.bump();
                }
                Some('\n') => return Ok(()),
                Some(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_script;

    #[test]
    fn plain_scripts_parse() {
        for s in [
            "s/a/b/",
            "s/a/b/g",
            "s|a|b|2",
            "1d",
            "1,5p",
            "$d",
            "/x/,/y/ s/a/b/gI",
            "0,/re/d",
            "1~2d",
            "2,+3d",
            "-n",
            "/a/!d",
            "{ p; d }",
            "y/abc/xyz/",
            ":a;N;$!ba;s/\\n/ /g",
            "a\\\nappended",
            "1i hello; world",
            "s/[/]/x/;p",
            "s|[|]|x|",
            "s/[\\]/x/",
            "/[/]/p",
            "s/[[:alpha:]/]/X/g",
            "# comment\np",
            "s/a/\\//",
            "q5",
        ] {
            let r = check_script(s);
            if s == "-n" {
                assert!(r.is_err());
                continue;
            }
            assert!(r.is_ok(), "{s}: {r:?}");
        }
    }

    #[test]
    fn programs_and_files_are_refused() {
        for s in [
            "1e id",
            "e id",
            "s/a/b/e",
            "s/a/id/ge",
            "s/a/b/w /tmp/x",
            "s/a/b/gw out",
            "w out",
            "1W out",
            "r /etc/passwd",
            "R f",
            "/x/{ p; e id\n}",
            "1!e id",
            "s/a/b/;e",
            "s/a/b/ ; 1 e",
            "s/x/y/ \n w z",
            "{",
            "s/a/b",
            "k",
            "s/a[/x/",
            "s/[/]/x/e",
            "/[/]/e id",
        ] {
            assert!(check_script(s).is_err(), "{s}");
        }
    }
}
