//! Finding the probe sites of a compute entry point in naga's IR: every `if` condition, each
//! loop's exit test (`while`, `for`, `break if`), every `switch` selector and the entry of every
//! function the entry point calls, with the byte range of the user's text to wrap.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// What a probe site counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SiteKind {
    /// An `if` condition: taken = the condition was true.
    If,
    /// A loop's exit test: taken = the test was true (`while`/`for`: the loop goes on;
    /// `break if`: it is left).
    Loop,
    /// A `switch` selector: taken = the lane's selector equals the first active lane's.
    Switch,
    /// Entry of a called function: every lane that enters counts as taken.
    Call,
}

impl SiteKind {
    /// The word the table and the JSON use.
    pub fn name(self) -> &'static str {
        match self {
            SiteKind::If => "if",
            SiteKind::Loop => "loop",
            SiteKind::Switch => "switch",
            SiteKind::Call => "call",
        }
    }
}

/// One probe site in the user's source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// What the site counts.
    pub kind: SiteKind,
    /// 1-based line and column of the condition (of the function name for `call`).
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// The condition's source text (the function's signature for `call`), on one line.
    pub source: String,
    /// The function the site is in.
    pub function: String,
    /// For `call`: the lines of the calls to the function (in the entry point and the
    /// functions it calls), in source order; empty for other kinds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callers: Vec<u32>,
}

/// One clause of a `switch` (`case 1u, 2u:` or `default:`), counted apart from its switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// The switch's site number.
    pub switch: usize,
    /// 1-based line and column of the clause's `case` or `default`.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// The clause as written up to its body (`case 1u, 2u`, `default`), on one line.
    pub source: String,
    /// The selector values that choose it (as u32 bits; an i32 selector's bits).
    pub values: Vec<u32>,
    /// Whether it is (or includes) `default`.
    pub default: bool,
}

impl Case {
    /// Whether a lane whose selector is `selector` runs this clause, given all the clauses.
    pub fn chosen_by(&self, selector: u32, all: &[Case]) -> bool {
        if self.values.contains(&selector) {
            return true;
        }
        self.default && !all.iter().filter(|c| c.switch == self.switch).any(|c| c.values.contains(&selector))
    }
}

/// How the probe wraps the user's text at one site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Splice {
    /// Wrap the boolean expression at this byte range.
    Condition(Range<usize>),
    /// Wrap a switch selector of this scalar type (`u32` or `i32`).
    Selector(Range<usize>, &'static str),
    /// Insert a call at this byte offset (just inside a function body's `{`).
    Entry(usize),
}

/// A site with what instrumenting and emulating it need.
#[derive(Clone, Debug)]
pub(crate) struct FoundSite {
    pub site: Site,
    pub splice: Splice,
    /// Byte offset that orders sites as they appear in the source.
    pub offset: usize,
    /// Indices (into the found sites) of the loop tests this site is nested in, outermost first;
    /// for a site of a called function, the loops around its calls (and its callers') first.
    pub loops: Vec<usize>,
    /// For a loop test: the value on which the loop is left (`while`: false, `break if`: true).
    pub exit_on: Option<bool>,
    /// For a switch: its clauses (`switch` filled in once sites are numbered).
    pub cases: Vec<Case>,
    /// The site whose taken lanes are exactly the lanes evaluating this one, at as many steps:
    /// this one is the first test after the `if`, loop test or function entry that guards it,
    /// with nothing in between that can take a lane away. Its evaluations and active lanes are
    /// that site's taken steps and taken lanes, so the probe does not count them again.
    pub derived_from: Option<usize>,
    /// For a loop test that lanes leave only by failing it (no `break` or `return` in the
    /// loop): the byte offset just after the loop, where the lanes' evaluations are summed
    /// once per run of the loop instead of being voted on at every evaluation.
    pub loop_exit: Option<usize>,
}

/// The sites of one entry point and where its signature and body are in the source.
#[derive(Clone, Debug)]
pub(crate) struct EntryAnalysis {
    pub sites: Vec<FoundSite>,
    /// Builtin arguments the entry point already has, as WGSL expressions (`gid`, `ids.local`).
    pub builtins: Vec<(naga::BuiltIn, String)>,
    /// Byte offsets just after the entry point's opening `(` and of its closing `)`, and
    /// whether its parameter list is empty.
    pub params_start: usize,
    pub params_end: usize,
    pub params_empty: bool,
    /// Byte offset just after the entry point body's `{`.
    pub body_start: usize,
    pub workgroup_size: [u32; 3],
    /// Byte offsets of the entry point's `return` statements.
    pub returns: Vec<usize>,
    /// The functions the entry point calls (directly or not): name, and the byte range of
    /// `fn name(...) { ... }` with the offset of the name.
    pub functions: Vec<CalledFunction>,
    /// Every call in the entry point and those functions: the callee's name and the byte
    /// offset where the call writes it (None where that is not known).
    pub calls: Vec<(String, Option<usize>)>,
    /// Whether the entry point or a function it calls has a barrier or workgroupUniformLoad
    /// (which every invocation of a workgroup must reach together).
    pub synchronises: bool,
}

/// A function an entry point calls, where it is written.
#[derive(Clone, Debug)]
pub(crate) struct CalledFunction {
    pub name: String,
    /// From `fn` to just after the closing `}`.
    pub range: Range<usize>,
    /// Byte offset of the name after `fn`.
    pub name_at: usize,
}

/// The source with comments blanked (same byte offsets), so searches skip commented-out code.
pub(crate) fn mask_comments(src: &str) -> Vec<u8> {
    let mut out = src.as_bytes().to_vec();
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] != b'\n' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

/// 1-based (line, column) of byte `offset`, the column counted in characters.
pub(crate) fn line_column(src: &str, offset: usize) -> (u32, u32) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line as u32, column as u32)
}

pub(crate) fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Byte offset of the `)`, `}` or `]` that closes the bracket at `open`.
pub(crate) fn matching_close(masked: &[u8], open: usize) -> Option<usize> {
    let (opening, closing) = match masked.get(open)? {
        b'(' => (b'(', b')'),
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, &c) in masked.iter().enumerate().skip(open) {
        if c == opening {
            depth += 1;
        } else if c == closing {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Byte offsets of the `(` and matching `)` of the parameter list and just after the body's
/// `{`, for the function declared at or after `from` (`fn name(`).
fn signature(masked: &[u8], from: usize) -> Option<(usize, usize, usize)> {
    let open = from + masked[from..].iter().position(|&c| c == b'(')?;
    let close = matching_close(masked, open)?;
    let brace = close + masked[close..].iter().position(|&c| c == b'{')?;
    Some((open, close, brace + 1))
}

/// Byte offset of `fn NAME` (the `fn`) in the masked source.
fn find_fn(masked: &[u8], name: &str) -> Option<usize> {
    let mut i = 0;
    while let Some(p) = masked[i..].windows(2).position(|w| w == b"fn") {
        let at = i + p;
        i = at + 2;
        if at > 0 && is_ident(masked[at - 1]) || masked.get(at + 2).is_none_or(|&c| is_ident(c)) {
            continue;
        }
        let mut j = at + 2;
        while j < masked.len() && masked[j].is_ascii_whitespace() {
            j += 1;
        }
        let end = j + masked[j..].iter().take_while(|&&c| is_ident(c)).count();
        if &masked[j..end] == name.as_bytes() {
            return Some(at);
        }
    }
    None
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

type Function = naga::Handle<naga::Function>;

/// A call a walked function makes.
struct Call {
    function: Function,
    /// Byte offset of the call.
    at: Option<usize>,
    /// The site whose taken lanes are exactly the lanes making the call (see
    /// [`FoundSite::derived_from`]).
    guard: Option<usize>,
    /// The loops around the call.
    loops: Vec<usize>,
}

struct Walker<'a> {
    src: &'a str,
    masked: &'a [u8],
    module: &'a naga::Module,
    info: &'a naga::valid::FunctionInfo,
    name: String,
    sites: Vec<FoundSite>,
    /// Functions called.
    calls: Vec<Call>,
    /// Whether a barrier or workgroupUniformLoad was seen.
    synchronises: bool,
}

impl Walker<'_> {
    /// The text from `from` up to the first `stop` outside parentheses and brackets, trimmed.
    fn until(&self, from: usize, stop: u8) -> Option<Range<usize>> {
        let mut depth = 0i32;
        let end = from
            + self.masked.get(from..)?.iter().position(|&c| {
                match c {
                    b'(' | b'[' => depth += 1,
                    b')' | b']' => depth -= 1,
                    _ => {}
                }
                c == stop && depth == 0
            })?;
        let text = &self.src[from..end];
        let mut start = from + (text.len() - text.trim_start().len());
        let mut end = end - (text.len() - text.trim_end().len());
        // `if (c)` is the condition `c`
        while end > start + 1 && self.masked[start] == b'(' && matching_close(self.masked, start) == Some(end - 1) {
            let inner = &self.src[start + 1..end - 1];
            start += 1 + (inner.len() - inner.trim_start().len());
            end -= 1 + (inner.len() - inner.trim_end().len());
        }
        (start < end).then_some(start..end)
    }

    /// The statement's source when it starts with `keyword` (naga's own statements, such as
    /// the `if`s it makes of `&&`, `||` and loop tests, do not).
    fn starts_with(&self, span: naga::Span, keyword: &str) -> Option<usize> {
        let r = span.to_range()?;
        let after = r.start + keyword.len();
        (self.masked.get(r.start..after)? == keyword.as_bytes() && !self.masked.get(after).is_some_and(|&c| is_ident(c))).then_some(r.start)
    }

    fn push(&mut self, kind: SiteKind, range: Range<usize>, splice: Splice, loops: &[usize], exit_on: Option<bool>) -> usize {
        let (line, column) = line_column(self.src, range.start);
        let site =
            Site { kind, line, column, source: one_line(&self.src[range.clone()]), function: self.name.clone(), callers: Vec::new() };
        self.sites.push(FoundSite {
            site,
            splice,
            offset: range.start,
            loops: loops.to_vec(),
            exit_on,
            cases: Vec::new(),
            derived_from: None,
            loop_exit: None,
        });
        self.sites.len() - 1
    }

    /// Where the `if` of a user's `if` statement is (naga spans an `else if` from its `else`).
    fn if_keyword(&self, span: naga::Span) -> Option<usize> {
        self.starts_with(span, "if").or_else(|| {
            let at = self.starts_with(span, "else")? + 4;
            let at = at + self.masked[at..].iter().take_while(|c| c.is_ascii_whitespace()).count();
            (self.masked[at..].starts_with(b"if") && !self.masked.get(at + 2).is_some_and(|&c| is_ident(c))).then_some(at)
        })
    }

    /// A condition at `range` in the source (conditions are located in the text:
    /// naga gives a `let` or an argument used as a condition the span of its definition).
    fn condition(&mut self, kind: SiteKind, range: Option<Range<usize>>, loops: &[usize], exit_on: Option<bool>) -> Option<usize> {
        let range = range?;
        Some(self.push(kind, range.clone(), Splice::Condition(range), loops, exit_on))
    }

    /// The test of a `while` or `for` loop (naga makes it an `if` that breaks), and its text.
    fn loop_test(&self, body: &naga::Block, loop_span: naga::Span) -> Option<(naga::Handle<naga::Expression>, Range<usize>)> {
        let range = if let Some(at) = self.starts_with(loop_span, "while") {
            self.until(at + 5, b'{')?
        } else {
            let at = self.starts_with(loop_span, "for")?;
            let open = at + self.masked[at..].iter().position(|&c| c == b'(')?;
            let init = self.until(open + 1, b';').map_or(open + 1, |r| r.end);
            let first_semicolon = init + self.masked[init..].iter().position(|&c| c == b';')?;
            self.until(first_semicolon + 1, b';')?
        };
        let test = body.span_iter().find_map(|(s, span)| match s {
            naga::Statement::If { condition, accept, reject }
                if accept.is_empty()
                    && matches!(reject.iter().next(), Some(naga::Statement::Break))
                    && self.starts_with(*span, "if").is_none() =>
            {
                Some(*condition)
            }
            _ => None,
        })?;
        Some((test, range))
    }

    /// The condition of a loop's `break if`: the last one in the loop's text.
    fn break_if(&self, loop_span: naga::Span) -> Option<Range<usize>> {
        let r = loop_span.to_range()?;
        let text = &self.masked[r.clone()];
        let mut found = None;
        for (i, w) in text.windows(5).enumerate() {
            if w == b"break" && (i == 0 || !is_ident(text[i - 1])) {
                let rest = i + 5 + text[i + 5..].iter().take_while(|c| c.is_ascii_whitespace()).count();
                if text[rest..].starts_with(b"if") && !text.get(rest + 2).is_some_and(|&c| is_ident(c)) {
                    found = Some(r.start + rest + 2);
                }
            }
        }
        self.until(found?, b';')
    }

    /// The clauses of a switch whose selector ends at `from`: naga's cases (a clause with
    /// several selectors is several cases that fall through) matched in order with the
    /// `case`/`default` keywords at the top level of the switch's body. None when they do not
    /// match (then the switch has no per-case counts).
    fn clauses(&self, from: usize, cases: &[naga::SwitchCase]) -> Vec<Case> {
        let mut groups: Vec<(Vec<u32>, bool)> = vec![(Vec::new(), false)];
        for case in cases {
            let last = groups.last_mut().expect("one group at least");
            match case.value {
                naga::SwitchValue::I32(v) => last.0.push(v as u32),
                naga::SwitchValue::U32(v) => last.0.push(v),
                naga::SwitchValue::Default => last.1 = true,
            }
            if !case.fall_through {
                groups.push((Vec::new(), false));
            }
        }
        groups.pop();
        let Some(open) = self.masked[from..].iter().position(|&c| c == b'{').map(|p| from + p) else { return Vec::new() };
        let mut keywords = Vec::new();
        let (mut depth, mut i) = (0i32, open);
        while i < self.masked.len() {
            match self.masked[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ if depth == 1 && (i == 0 || !is_ident(self.masked[i - 1])) => {
                    for word in ["case", "default"] {
                        let end = i + word.len();
                        if self.masked[i..].starts_with(word.as_bytes()) && !self.masked.get(end).is_some_and(|&c| is_ident(c)) {
                            // the clause runs to its `:` or body `{` (a `default` among a case's selectors is inside it)
                            let stop = self.masked[end..].iter().position(|&c| c == b':' || c == b'{').map_or(end, |p| end + p);
                            keywords.push((i, stop));
                            i = stop - 1;
                            break;
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if keywords.len() != groups.len() {
            return Vec::new();
        }
        keywords
            .into_iter()
            .zip(groups)
            .map(|((at, stop), (values, default))| {
                let (line, column) = line_column(self.src, at);
                Case { switch: 0, line, column, source: one_line(self.src[at..stop].trim_end()), values, default }
            })
            .collect()
    }

    /// Walks `block`; `guard` is the site whose taken lanes are those that start the block
    /// (None where that is not so), and holds for its statements until one may take a lane away.
    fn block(&mut self, block: &naga::Block, loops: &[usize], skip_if: Option<naga::Handle<naga::Expression>>, guard: Option<usize>) {
        // a loop's test is not its body's first statement where naga evaluates calls or `&&`
        // before it: those statements run for every lane that evaluates the test
        let past_test = guard;
        let mut guard = if skip_if.is_some() { None } else { guard };
        for (statement, span) in block.span_iter() {
            let test = is_test(statement, skip_if);
            match statement {
                naga::Statement::If { condition, accept, reject } => {
                    let site = match self.if_keyword(*span).filter(|_| Some(*condition) != skip_if) {
                        Some(at) => self.condition(SiteKind::If, self.until(at + 2, b'{'), loops, None),
                        None => None,
                    };
                    if let Some(k) = site {
                        self.sites[k].derived_from = guard;
                    }
                    self.block(accept, loops, None, site);
                    self.block(reject, loops, None, None);
                }
                naga::Statement::Loop { body, continuing, break_if } => {
                    let test = self.loop_test(body, *span);
                    let site = match (&test, break_if) {
                        (Some((_, range)), _) => self.condition(SiteKind::Loop, Some(range.clone()), loops, Some(false)),
                        (None, Some(_)) => self.condition(SiteKind::Loop, self.break_if(*span), loops, Some(true)),
                        (None, None) => None,
                    };
                    let test_expr = test.as_ref().map(|t| t.0);
                    if let Some(k) = site {
                        let only_by_test = !body.iter().filter(|s| !is_test(s, test_expr)).any(|s| leaves(s, false))
                            && !continuing.iter().any(|s| leaves(s, false));
                        self.sites[k].loop_exit = span.to_range().map(|r| r.end).filter(|_| only_by_test);
                    }
                    let inner: Vec<usize> = loops.iter().copied().chain(site).collect();
                    // `while`/`for`: the lanes past the test are those that took it
                    self.block(body, &inner, test_expr, site.filter(|_| test_expr.is_some()));
                    self.block(continuing, &inner, None, None);
                }
                naga::Statement::Switch { selector, cases } => {
                    let scalar = match self.info[*selector].ty.inner_with(&self.module.types) {
                        naga::TypeInner::Scalar(s) if s.kind == naga::ScalarKind::Sint => "i32",
                        _ => "u32",
                    };
                    if let Some(range) = self.starts_with(*span, "switch").and_then(|at| self.until(at + 6, b'{')) {
                        let k = self.push(SiteKind::Switch, range.clone(), Splice::Selector(range.clone(), scalar), loops, None);
                        self.sites[k].cases = self.clauses(range.end, cases);
                    }
                    for case in cases {
                        self.block(&case.body, loops, None, None);
                    }
                }
                naga::Statement::Block(b) => self.block(b, loops, None, guard),
                naga::Statement::Call { function, .. } => {
                    self.calls.push(Call { function: *function, at: span.to_range().map(|r| r.start), guard, loops: loops.to_vec() })
                }
                naga::Statement::ControlBarrier(_) | naga::Statement::MemoryBarrier(_) | naga::Statement::WorkGroupUniformLoad { .. } => {
                    self.synchronises = true
                }
                _ => {}
            }
            if test {
                guard = past_test;
            } else if leaves(statement, true) {
                guard = None;
            }
        }
    }
}

/// The loop whose every iteration evaluates site `k` with exactly the lanes that go on: `k` is
/// an `if` derived (through function entries) from a loop test counted per run of the loop
/// ([`FoundSite::loop_exit`]). The lanes that go on shrink from one iteration to the next, so
/// the lane that stays longest sees every evaluation, and the subgroup's votes can be counted
/// by every lane and taken as their maximum where the loop ends, without a first lane.
pub(crate) fn counted_by_loop(found: &[FoundSite], k: usize) -> Option<usize> {
    if found[k].site.kind != SiteKind::If {
        return None;
    }
    let mut guard = found[k].derived_from?;
    for _ in 0..found.len() {
        match found[guard].site.kind {
            SiteKind::Loop if found[guard].loop_exit.is_some() => return Some(guard),
            SiteKind::Call => guard = found[guard].derived_from?,
            _ => return None,
        }
    }
    None
}

/// Whether `statement` is the `if` naga makes of a loop's test whose condition is `test`.
fn is_test(statement: &naga::Statement, test: Option<naga::Handle<naga::Expression>>) -> bool {
    matches!(statement, naga::Statement::If { condition, accept, reject }
        if Some(*condition) == test && accept.is_empty() && matches!(reject.iter().next(), Some(naga::Statement::Break)))
}

/// Whether running `statement` may send a lane out of the loop around it (a `return`, or a
/// `break` of that loop) or, with `continue_too`, on to the loop's next iteration: then the
/// lanes that reach the next statement may be fewer than those that reached this one.
fn leaves(statement: &naga::Statement, continue_too: bool) -> bool {
    fn walk(statement: &naga::Statement, continue_too: bool, in_loop: bool, in_switch: bool) -> bool {
        let any = |block: &naga::Block, in_loop: bool, in_switch: bool| block.iter().any(|s| walk(s, continue_too, in_loop, in_switch));
        match statement {
            naga::Statement::Return { .. } | naga::Statement::Kill => true,
            naga::Statement::Break => !in_loop && !in_switch,
            naga::Statement::Continue => continue_too && !in_loop,
            naga::Statement::If { accept, reject, .. } => any(accept, in_loop, in_switch) || any(reject, in_loop, in_switch),
            naga::Statement::Switch { cases, .. } => cases.iter().any(|c| any(&c.body, in_loop, true)),
            naga::Statement::Loop { body, continuing, .. } => any(body, true, in_switch) || any(continuing, true, in_switch),
            naga::Statement::Block(b) => any(b, in_loop, in_switch),
            _ => false,
        }
    }
    walk(statement, continue_too, false, false)
}

/// The sites of compute entry point `entry` and of every function it calls, in source order;
/// `workgroup_size` is the entry point's size with pipeline overrides resolved (None: the
/// shader must give it without overrides).
pub(crate) fn analyse_sized(
    src: &str,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: &str,
    workgroup_size: Option<[u32; 3]>,
) -> Result<EntryAnalysis> {
    let index = module.entry_points.iter().position(|e| e.name == entry).ok_or_else(|| {
        let names: Vec<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
        Error::invalid("entry point", format!("'{entry}' is not in the shader; its entry points: {}", names.join(", ")))
    })?;
    let ep = &module.entry_points[index];
    if ep.stage != naga::ShaderStage::Compute {
        return Err(Error::invalid("entry point", format!("'{entry}' is a {:?} shader; simtlab profiles compute entry points", ep.stage)));
    }
    if workgroup_size.is_none() && (ep.workgroup_size_overrides.is_some() || ep.workgroup_size.contains(&0)) {
        return Err(Error::invalid(
            "entry point",
            format!(
                "'{entry}' takes its workgroup size from pipeline overrides; give @workgroup_size literal or const values to profile it"
            ),
        ));
    }
    let masked = mask_comments(src);
    let invalid_signature = || Error::invalid("entry point", format!("could not find the declaration `fn {entry}(...) {{` in the source"));
    let at = find_fn(&masked, entry).ok_or_else(invalid_signature)?;
    let (open, close, body_start) = signature(&masked, at).ok_or_else(invalid_signature)?;

    let mut found = Vec::new();
    let walk = |function: &naga::Function, finfo: &naga::valid::FunctionInfo, name: String, entry_site: Option<usize>| {
        let mut w = Walker { src, masked: &masked, module, info: finfo, name, sites: Vec::new(), calls: Vec::new(), synchronises: false };
        if let Some(fn_at) = entry_site {
            if let Some((_, close, brace_end)) = signature(&masked, fn_at) {
                let name_at = fn_at + 2 + masked[fn_at + 2..].iter().take_while(|c| c.is_ascii_whitespace()).count();
                let (line, column) = line_column(src, name_at);
                let source = one_line(&src[name_at..=close]);
                let site = Site { kind: SiteKind::Call, line, column, source, function: w.name.clone(), callers: Vec::new() };
                w.sites.push(FoundSite {
                    site,
                    splice: Splice::Entry(brace_end),
                    offset: name_at,
                    loops: Vec::new(),
                    exit_on: None,
                    cases: Vec::new(),
                    derived_from: None,
                    loop_exit: None,
                });
            }
        }
        // a function's body starts with every lane that entered it
        let entered = (!w.sites.is_empty()).then_some(0);
        w.block(&function.body, &[], None, entered);
        (w.sites, w.calls, w.synchronises)
    };
    let (sites, calls, mut synchronises) = walk(&ep.function, info.get_entry_point(index), entry.to_string(), None);
    // every call, with its caller (None: the entry point), its guard and the loops around it
    // numbered among all sites found; and each walked function's sites
    let mut pending: Vec<Function> = calls.iter().map(|c| c.function).collect();
    let mut all_calls: Vec<(Option<Function>, Call)> = calls.into_iter().map(|c| (None, c)).collect();
    let mut walked: Vec<(Function, Range<usize>)> = Vec::new();
    append(&mut found, sites);
    let mut entries: Vec<(Function, usize)> = Vec::new();
    let mut visited = Vec::new();
    let mut functions = Vec::new();
    while let Some(h) = pending.pop() {
        if visited.contains(&h) {
            continue;
        }
        visited.push(h);
        let f = &module.functions[h];
        let fn_at = module.functions.get_span(h).to_range().map(|r| r.start).filter(|&s| masked[s..].starts_with(b"fn"));
        if let Some((at, (_, _, brace_end))) = fn_at.and_then(|at| Some((at, signature(&masked, at)?))) {
            if let Some(close) = matching_close(&masked, brace_end - 1) {
                let name_at = at + 2 + masked[at + 2..].iter().take_while(|c| c.is_ascii_whitespace()).count();
                functions.push(CalledFunction { name: f.name.clone().unwrap_or_default(), range: at..close + 1, name_at });
            }
        }
        let (sites, calls, barrier) = walk(f, &info[h], f.name.clone().unwrap_or_default(), fn_at);
        synchronises |= barrier;
        let base = found.len();
        if sites.first().is_some_and(|s| s.site.kind == SiteKind::Call) {
            entries.push((h, base));
        }
        pending.extend(calls.iter().map(|c| c.function));
        all_calls.extend(calls.into_iter().map(|c| {
            let (guard, loops) = (c.guard.map(|g| g + base), c.loops.iter().map(|l| l + base).collect());
            (Some(h), Call { guard, loops, ..c })
        }));
        walked.push((h, base..base + sites.len()));
        append(&mut found, sites);
    }
    // a function's sites are nested in the loops around its calls (and around its callers'),
    // so that emulation matches a site's evaluations within one call, not across calls; WGSL
    // has no recursion, so as many passes as functions settle it
    let mut around: Vec<(Function, Vec<usize>)> = walked.iter().map(|(h, _)| (*h, Vec::new())).collect();
    for _ in 0..walked.len() {
        for k in 0..around.len() {
            let mut loops: Vec<usize> = Vec::new();
            for (caller, call) in all_calls.iter().filter(|(_, c)| c.function == around[k].0) {
                let outer = caller.and_then(|c| around.iter().find(|(f, _)| *f == c)).map(|(_, l)| l.clone()).unwrap_or_default();
                for l in outer.into_iter().chain(call.loops.iter().copied()) {
                    if !loops.contains(&l) {
                        loops.push(l);
                    }
                }
            }
            around[k].1 = loops;
        }
    }
    for ((_, range), (_, outer)) in walked.iter().zip(&around) {
        for s in &mut found[range.clone()] {
            s.loops = outer.iter().copied().chain(s.loops.iter().copied()).collect();
        }
    }
    // a function called from one place, where the lanes making the call are a site's taken
    // lanes, is entered by those lanes
    for &(h, k) in &entries {
        if let [(_, call)] = all_calls.iter().filter(|(_, c)| c.function == h).collect::<Vec<_>>()[..] {
            found[k].derived_from = call.guard;
        }
    }
    for s in found.iter_mut().filter(|s| s.site.kind == SiteKind::Call) {
        let Some(h) = module.functions.iter().find(|(_, f)| f.name.as_deref() == Some(s.site.function.as_str())).map(|(h, _)| h) else {
            continue;
        };
        let mut lines: Vec<u32> =
            all_calls.iter().filter(|(_, c)| c.function == h).filter_map(|(_, c)| c.at).map(|at| line_column(src, at).0).collect();
        lines.sort_unstable();
        lines.dedup();
        s.site.callers = lines;
    }
    let mut found = in_source_order(found);
    for (k, s) in found.iter_mut().enumerate() {
        s.cases.iter_mut().for_each(|c| c.switch = k);
    }

    let mut builtins = Vec::new();
    for arg in &ep.function.arguments {
        let name = arg.name.clone().unwrap_or_default();
        match (&arg.binding, &module.types[arg.ty].inner) {
            (Some(naga::Binding::BuiltIn(b)), _) => builtins.push((*b, name)),
            (None, naga::TypeInner::Struct { members, .. }) => {
                for m in members {
                    if let Some(naga::Binding::BuiltIn(b)) = m.binding {
                        builtins.push((b, format!("{name}.{}", m.name.clone().unwrap_or_default())));
                    }
                }
            }
            _ => {}
        }
    }
    let params_empty = masked[open + 1..close].iter().all(u8::is_ascii_whitespace);
    let mut returns = Vec::new();
    entry_returns(&masked, &ep.function.body, &mut returns);
    let calls = all_calls
        .iter()
        .map(|(_, c)| {
            let name = module.functions[c.function].name.clone().unwrap_or_default();
            let at = c.at.filter(|&at| !name.is_empty() && masked[at..].starts_with(name.as_bytes()));
            (name, at)
        })
        .collect();
    Ok(EntryAnalysis {
        synchronises,
        functions,
        calls,
        sites: found,
        builtins,
        params_start: open + 1,
        params_end: close,
        params_empty,
        body_start,
        workgroup_size: workgroup_size.unwrap_or(ep.workgroup_size),
        returns,
    })
}

/// Byte offsets of the `return` statements written in a block of the entry point.
fn entry_returns(masked: &[u8], block: &naga::Block, out: &mut Vec<usize>) {
    for (statement, span) in block.span_iter() {
        match statement {
            naga::Statement::Return { .. } => {
                if let Some(r) = span.to_range().filter(|r| masked[r.start..].starts_with(b"return")) {
                    out.push(r.start);
                }
            }
            naga::Statement::If { accept, reject, .. } => {
                entry_returns(masked, accept, out);
                entry_returns(masked, reject, out);
            }
            naga::Statement::Loop { body, continuing, .. } => {
                entry_returns(masked, body, out);
                entry_returns(masked, continuing, out);
            }
            naga::Statement::Switch { cases, .. } => cases.iter().for_each(|c| entry_returns(masked, &c.body, out)),
            naga::Statement::Block(b) => entry_returns(masked, b, out),
            _ => {}
        }
    }
}

/// Appends the sites of one function, shifting their loop indices past those already found.
fn append(found: &mut Vec<FoundSite>, sites: Vec<FoundSite>) {
    let base = found.len();
    found.extend(sites.into_iter().map(|mut s| {
        s.loops.iter_mut().for_each(|l| *l += base);
        s.derived_from = s.derived_from.map(|d| d + base);
        s
    }));
}

/// Sorts sites by their place in the source, renumbering the loop indices.
fn in_source_order(mut sites: Vec<FoundSite>) -> Vec<FoundSite> {
    let mut order: Vec<usize> = (0..sites.len()).collect();
    order.sort_by_key(|&i| sites[i].offset);
    let mut new_index = vec![0; sites.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    for s in &mut sites {
        s.loops.iter_mut().for_each(|l| *l = new_index[*l]);
        s.derived_from = s.derived_from.map(|d| new_index[d]);
    }
    let mut slots: Vec<Option<FoundSite>> = sites.into_iter().map(Some).collect();
    order.iter().filter_map(|&i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analysed(wgsl: &str) -> Vec<FoundSite> {
        let (module, info) =
            crate::gpu::shader::validate(&crate::gpu::shader::preprocess_text("t.wgsl", wgsl, &[], &|_| None).unwrap()).unwrap();
        analyse_sized(wgsl, &module, &info, "main", None).unwrap().sites
    }

    #[test]
    fn counts_are_derived_only_where_no_lane_can_leave_in_between() {
        let wgsl = "@group(0) @binding(0) var<storage, read_write> d: array<u32>;\n\
            fn once(n: u32) -> u32 { if (n > 3u) { return 1u; } return 2u; }\n\
            fn twice(n: u32) -> u32 { if (n > 5u) { return 1u; } return 2u; }\n\
            @compute @workgroup_size(64)\n\
            fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n\
                var n = d[id.x];\n\
                while (n > 1u) { n = once(n); if (n == 7u) { n = 2u; } n -= 1u; }\n\
                loop { if (n > 9u) { break; } if (n == 3u) { n = twice(n); } n += 1u; }\n\
                for (var k = 0u; k < 4u; k++) { if ((n & 1u) == 1u) { continue; } if (n == 5u) { n = 1u; } }\n\
                d[id.x] = twice(n);\n\
            }\n";
        let sites = analysed(wgsl);
        let at = |text: &str| sites.iter().position(|s| s.site.source.starts_with(text)).unwrap_or_else(|| panic!("no site {text}"));
        let (while_test, for_test) = (at("n > 1u"), at("k < 4u"));
        // the while loop is left only by its test: counted per run of the loop; the for loop too
        // (a `continue` goes on to the test)
        assert!(sites[while_test].loop_exit.is_some() && sites[for_test].loop_exit.is_some());
        // once is entered by the lanes past the while's test, its if by those that entered
        assert_eq!(sites[at("once(")].derived_from, Some(while_test));
        assert_eq!(sites[at("n > 3u")].derived_from, Some(at("once(")));
        assert_eq!(sites[at("n == 7u")].derived_from, Some(while_test));
        // twice is called from two places; the if after a `break` or a `continue` may see fewer lanes
        assert_eq!(sites[at("twice(")].derived_from, None);
        assert_eq!(sites[at("n == 3u")].derived_from, None);
        assert_eq!(sites[at("(n & 1u) == 1u")].derived_from, Some(for_test));
        assert_eq!(sites[at("n == 5u")].derived_from, None);
        assert_eq!(sites[at("n > 9u")].loop_exit, None);
    }
}
