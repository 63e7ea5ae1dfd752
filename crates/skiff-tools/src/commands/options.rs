//! Command-line options read as GNU `getopt_long` reads them: clustered short options
//! (`-nr`), values attached or separate (`-oFILE`, `-o FILE`, `--output=FILE`, `--output FILE`),
//! unique prefixes of long options (`--out` is `--output`), `--` ending the options, and
//! options after operands. An option that is not in a command's table is unknown: a command with
//! one is never taken to be harmless.

/// What an option does with its value (or, without a value, by itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A flag: no value.
    Flag,
    /// A required value that is not a file.
    Value,
    /// An optional value (only in the attached forms: `-wN`, `--width=N`).
    Optional,
    /// A required value naming a file the command reads.
    Reads,
    /// A required value naming a file the command writes.
    Writes,
    /// The option runs a program or changes something: the command is not harmless.
    Forbidden,
    /// A flag that makes the command forbidden too (`-C` of `file`).
    ForbiddenFlag,
}

/// One option of a table: its name (one character for short ones) and what it takes.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    /// `o` for `-o`, `output` for `--output`.
    pub name: &'static str,
    /// What it takes.
    pub arg: Arg,
}

/// A command's options.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// Short options: each character, followed by a marker for what it takes (`=` value,
    /// `?` optional value, `<` file read, `>` file written, `!` forbidden with a value,
    /// `^` forbidden flag; none: a flag).
    pub short: &'static str,
    /// Long options, each with the same markers at its end.
    pub long: &'static [&'static str],
    /// `-NUM` is an option (`head -5`, `grep -3`).
    pub numeric: bool,
}

/// A table whose `-NUM` is not an option.
pub(super) const fn t(short: &'static str, long: &'static [&'static str]) -> Table {
    Table {
        short,
        long,
        numeric: false,
    }
}

/// A table whose `-NUM` is an option (`head -5`).
pub(super) const fn tn(short: &'static str, long: &'static [&'static str]) -> Table {
    Table {
        short,
        long,
        numeric: true,
    }
}

/// An option found on a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its name as in the table (`o`, `output`).
    pub name: &'static str,
    /// What it takes.
    pub arg: Arg,
    /// Its value, if it has one.
    pub value: Option<String>,
}

/// A command line read against a table.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// The options, in order.
    pub options: Vec<Found>,
    /// The operands, in order.
    pub operands: Vec<String>,
}

impl Parsed {
    /// Whether an option of one of these names was given.
    pub fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|o| names.contains(&o.name))
    }

    /// The values of the options of these names.
    pub fn values<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |o| names.contains(&o.name))
            .filter_map(|o| o.value.as_deref())
    }

    /// Files named by options that read them.
    pub fn read_values(&self) -> impl Iterator<Item = &str> {
        self.options
            .iter()
            .filter(|o| o.arg == Arg::Reads)
            .filter_map(|o| o.value.as_deref())
    }

    /// Files named by options that write them.
    pub fn write_values(&self) -> impl Iterator<Item = &str> {
        self.options
            .iter()
            .filter(|o| o.arg == Arg::Writes)
            .filter_map(|o| o.value.as_deref())
    }

    /// The first forbidden option, if any.
    pub fn forbidden(&self) -> Option<&Found> {
        self.options
            .iter()
            .find(|o| matches!(o.arg, Arg::Forbidden | Arg::ForbiddenFlag))
    }
}

fn marker(c: char) -> Option<Arg> {
    Some(match c {
        '=' => Arg::Value,
        '?' => Arg::Optional,
        '<' => Arg::Reads,
        '>' => Arg::Writes,
        '!' => Arg::Forbidden,
        '^' => Arg::ForbiddenFlag,
        _ => return None,
    })
}

impl Table {
    fn short_opt(&self, c: char) -> Option<Arg> {
        let mut chars = self.short.chars().peekable();
        while let Some(name) = chars.next() {
            let arg = chars.peek().copied().and_then(marker);
            if arg.is_some() {
                chars.next();
            }
            if name == c && name != ' ' {
                return Some(arg.unwrap_or(Arg::Flag));
            }
        }
        None
    }

    /// The long option a (possibly abbreviated) name means: an exact match, else the only one
    /// it is a prefix of.
    fn long_opt(&self, given: &str) -> Result<Opt, String> {
        let split = |spec: &'static str| -> Opt {
            match spec.chars().last().and_then(marker) {
                Some(arg) => Opt {
                    name: &spec[..spec.len() - 1],
                    arg,
                },
                None => Opt {
                    name: spec,
                    arg: Arg::Flag,
                },
            }
        };
        let all = self.long.iter().map(|s| split(s));
        if let Some(exact) = all.clone().find(|o| o.name == given) {
            return Ok(exact);
        }
        let mut matches = all.filter(|o| o.name.starts_with(given));
        match (matches.next(), matches.next()) {
            (Some(one), None) if !given.is_empty() => Ok(one),
            (Some(_), Some(_)) => Err(format!("--{given} is ambiguous")),
            _ => Err(format!("--{given} is not an option skiff knows")),
        }
    }

    /// Read `args` (the words after the command name).
    pub fn parse(&self, args: &[String]) -> Result<Parsed, String> {
        let mut out = Parsed::default();
        let mut i = 0;
        let mut options_done = false;
        while let Some(a) = args.get(i) {
            i += 1;
            if options_done || a == "-" || !a.starts_with('-') {
                out.operands.push(a.clone());
                continue;
            }
            if a == "--" {
                options_done = true;
                continue;
            }
            if let Some(long) = a.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_owned())),
                    None => (long, None),
                };
                let opt = self.long_opt(name)?;
                let value = match opt.arg {
                    Arg::Flag | Arg::ForbiddenFlag => {
                        if attached.is_some() {
                            return Err(format!("--{} takes no value", opt.name));
                        }
                        None
                    }
                    Arg::Optional => attached,
                    _ => match attached {
                        Some(v) => Some(v),
                        None => {
                            let v = args
                                .get(i)
                                .ok_or_else(|| format!("--{} needs a value", opt.name))?;
                            i += 1;
                            Some(v.clone())
                        }
                    },
                };
                out.options.push(Found {
                    name: opt.name,
                    arg: opt.arg,
                    value,
                });
                continue;
            }
            let cluster = &a[1..];
            if self.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
                out.options.push(Found {
                    name: "NUM",
                    arg: Arg::Value,
                    value: Some(cluster.to_owned()),
                });
                continue;
            }
            for (pos, c) in cluster.char_indices() {
                let arg = self
                    .short_opt(c)
                    .ok_or_else(|| format!("-{c} is not an option skiff knows"))?;
                let name = short_name(self.short, c);
                let rest = &cluster[pos + c.len_utf8()..];
                match arg {
                    Arg::Flag | Arg::ForbiddenFlag => out.options.push(Found {
                        name,
                        arg,
                        value: None,
                    }),
                    Arg::Optional => {
                        out.options.push(Found {
                            name,
                            arg,
                            value: (!rest.is_empty()).then(|| rest.to_owned()),
                        });
                        break;
                    }
                    _ => {
                        let value = if rest.is_empty() {
                            let v = args.get(i).ok_or_else(|| format!("-{c} needs a value"))?;
                            i += 1;
                            v.clone()
                        } else {
                            rest.to_owned()
                        };
                        out.options.push(Found {
                            name,
                            arg,
                            value: Some(value),
                        });
                        break;
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The `&'static str` of a short option's character in the table.
fn short_name(short: &'static str, c: char) -> &'static str {
    short
        .char_indices()
        .find(|(_, ch)| *ch == c)
        .map_or("?", |(i, ch)| &short[i..i + ch.len_utf8()])
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Table = Table {
        short: "bfnro>k=",
        long: &["output>", "compress-program!", "key=", "reverse", "check?"],
        numeric: false,
    };

    fn parse(args: &[&str]) -> Result<Parsed, String> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        SORT.parse(&args)
    }

    #[test]
    fn every_spelling_of_a_value_is_found() {
        for args in [
            &["-o", "f"][..],
            &["-of"],
            &["-rof"],
            &["-ro", "f"],
            &["--output=f"],
            &["--output", "f"],
            &["--out=f"],
            &["--o", "f"],
            &["in", "--output=f"],
        ] {
            let p = parse(args).unwrap();
            assert_eq!(p.write_values().collect::<Vec<_>>(), ["f"], "{args:?}");
        }
    }

    #[test]
    fn operands_options_and_errors() {
        let p = parse(&["-r", "a", "--", "-o", "b"]).unwrap();
        assert_eq!(p.operands, ["a", "-o", "b"]);
        assert!(p.write_values().next().is_none());
        assert!(parse(&["-x"]).is_err());
        assert!(parse(&["--nope"]).is_err());
        assert!(
            parse(&["--c"]).is_err(),
            "ambiguous: check, compress-program"
        );
        assert!(parse(&["--reverse=1"]).is_err());
        assert!(parse(&["-o"]).is_err());
        assert!(parse(&["--compress=gzip"]).unwrap().forbidden().is_some());
        let p = parse(&["--check", "f"]).unwrap();
        assert_eq!(p.operands, ["f"]);
    }
}
