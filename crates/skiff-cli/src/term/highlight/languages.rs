//! The languages [`super`] knows: each a [`Spec`] of comment markers, quotes and words.

/// A language for the lexer.
#[derive(Debug)]
pub(super) struct Spec {
    /// Fence names and file extensions, lower case.
    pub(super) names: &'static str,
    /// What starts a comment to the end of the line.
    pub(super) line_comments: &'static [&'static str],
    /// What starts and ends a block comment.
    pub(super) block_comment: Option<(&'static str, &'static str)>,
    /// Block comments nest (Rust).
    pub(super) nested_comments: bool,
    /// String quotes; a string may run over lines when `multiline_strings`.
    pub(super) quotes: &'static [u8],
    pub(super) multiline_strings: bool,
    /// `"""` and `'''` strings (Python, TOML, Kotlin, Swift...).
    pub(super) triple_quotes: bool,
    /// Keywords, built-in types and constants, each list separated by spaces.
    pub(super) keywords: &'static str,
    pub(super) types: &'static str,
    pub(super) constants: &'static str,
    /// Words starting with a capital letter are types (Rust, Java, C#, Swift...).
    pub(super) capitalized_types: bool,
    /// Keywords are matched ignoring case (SQL).
    pub(super) case_insensitive: bool,
    /// `$name`, `${...}`, `$1` are variables (shells, Makefiles, PHP, Perl).
    pub(super) dollar_variables: bool,
    /// `@name` is an attribute (Python decorators, Java annotations).
    pub(super) at_attributes: bool,
    /// Rust: lifetimes, raw strings, `#[attributes]` and `macro!` calls.
    pub(super) rust: bool,
    /// A `#` starts a comment only at the start of a word (shells: `$#`, `a#b`).
    pub(super) hash_needs_space: bool,
    /// `-` continues a word (CSS properties, Lisp).
    pub(super) dash_in_words: bool,
}

/// What most languages share; each language says where it differs.
pub(super) const BASE: Spec = Spec {
    names: "",
    line_comments: &[],
    block_comment: None,
    nested_comments: false,
    quotes: b"\"'",
    multiline_strings: false,
    triple_quotes: false,
    keywords: "",
    types: "",
    constants: "",
    capitalized_types: false,
    case_insensitive: false,
    dollar_variables: false,
    at_attributes: false,
    rust: false,
    hash_needs_space: false,
    dash_in_words: false,
};

const C_TYPES: &str = "\
    void char short int long float double signed unsigned bool size_t ssize_t int8_t int16_t \
    int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t ptrdiff_t FILE wchar_t \
    auto";
const C_KEYWORDS: &str = "\
    if else for while do switch case default break continue return goto struct union enum typedef \
    static extern const volatile register inline sizeof restrict #include #define #ifdef #ifndef \
    #if #else #elif #endif #pragma #undef";
const CPP_KEYWORDS: &str = "\
    if else for while do switch case default break continue return goto struct union enum typedef \
    static extern const volatile register inline sizeof class namespace template typename public \
    private protected virtual override final friend operator new delete this using try catch throw \
    noexcept constexpr consteval static_cast dynamic_cast reinterpret_cast const_cast explicit \
    mutable decltype co_await co_return co_yield concept requires #include #define #ifdef #ifndef \
    #if #else #elif #endif #pragma";
const C_CONSTANTS: &str = "NULL true false nullptr EOF stdin stdout";
const JS_KEYWORDS: &str = "\
    var let const function return if else for while do switch case default break continue new \
    delete typeof instanceof in of class extends super this import export from as async await \
    yield try catch finally throw void with static get set interface type enum implements \
    namespace declare readonly public private protected abstract keyof satisfies is module";
const JS_TYPES: &str = "\
    string number boolean any unknown never object symbol bigint Array Promise Map Set Record \
    Partial Object String Number Boolean Error Date RegExp JSON Math console";
const JS_CONSTANTS: &str = "true false null undefined NaN Infinity";
const JAVA_KEYWORDS: &str = "\
    abstract assert break case catch class continue default do else enum extends final finally for \
    if implements import instanceof interface native new package private protected public return \
    static strictfp super switch synchronized this throw throws transient try volatile while var \
    record sealed permits yield fun val object companion data when is in as override open internal \
    lateinit suspend def trait match case implicit lazy using namespace async await readonly ref \
    out params struct partial get set let func guard protocol extension where self init deinit \
    inout typealias mutating throws rethrows some any foreach virtual sealed base delegate event \
    operator with required late mixin library part import export";
const JAVA_TYPES: &str = "\
    void boolean byte char short int long float double string bool decimal object dynamic uint \
    ulong ushort sbyte";
const JAVA_CONSTANTS: &str = "true false null nil None Unit";

/// The languages, looked up by [`Spec::names`].
pub(super) static SPECS: &[Spec] = &[
    Spec {
        names: "rust rs",
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        nested_comments: true,
        quotes: b"\"'",
        multiline_strings: true,
        keywords: "\
            as async await break const continue crate dyn else enum extern fn for if impl in let \
            loop match mod move mut pub ref return self static struct super trait type unsafe use \
            where while yield macro_rules union",
        types: "bool char str u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64 Self",
        constants: "true false None Some Ok Err",
        capitalized_types: true,
        rust: true,
        ..BASE
    },
    Spec {
        names: "python py py3 python3 pyi pyw gyp bzl starlark",
        line_comments: &["#"],
        triple_quotes: true,
        keywords: "\
            and as assert async await break class continue def del elif else except finally for \
            from global if import in is lambda nonlocal not or pass raise return try while with \
            yield match case self cls",
        types: "\
            int float str bytes bool list dict set tuple object type complex frozenset bytearray",
        constants: "True False None NotImplemented Ellipsis __name__",
        capitalized_types: true,
        at_attributes: true,
        ..BASE
    },
    Spec {
        names: "javascript js jsx mjs cjs node typescript ts tsx mts cts json5 jsonc es6",
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: b"\"'`",
        multiline_strings: true,
        keywords: JS_KEYWORDS,
        types: JS_TYPES,
        constants: JS_CONSTANTS,
        capitalized_types: true,
        at_attributes: true,
        ..BASE
    },
    Spec {
        names: "json jsonl ndjson geojson ipynb har",
        quotes: b"\"",
        constants: "true false null",
        ..BASE
    },
    Spec {
        names: "\
            bash sh shell zsh ksh fish console shell-session sh-session shellscript ash dash bats \
            envrc env dotenv",
        line_comments: &["#"],
        multiline_strings: true,
        keywords: "\
            if then else elif fi for in do done case esac while until function return select time \
            local export readonly declare unset set shift exit source eval exec trap break \
            continue",
        types: "",
        constants: "true false",
        dollar_variables: true,
        hash_needs_space: true,
        dash_in_words: true,
        ..BASE
    },
    Spec {
        names: "go golang",
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        quotes: b"\"'`",
        multiline_strings: true,
        keywords: "\
            break case chan const continue default defer else fallthrough for func go goto if \
            import interface map package range return select struct switch type var",
        types: "\
            bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune \
            string uint uint8 uint16 uint32 uint64 uintptr any",
        constants: "true false nil iota",
        ..BASE
    },
    Spec {
        names: "c h",
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        keywords: C_KEYWORDS,
        types: C_TYPES,
        constants: C_CONSTANTS,
        ..BASE
    },
    Spec {
        names: "cpp c++ cc cxx hpp hh hxx h++ cuda cu objc objective-c m mm ino arduino",
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        keywords: CPP_KEYWORDS,
        types: C_TYPES,
        constants: C_CONSTANTS,
        ..BASE
    },
    Spec {
        names: "java kotlin kt kts scala sc sbt csharp cs c# swift dart groovy gradle",
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        multiline_strings: true,
        triple_quotes: true,
        keywords: JAVA_KEYWORDS,
        types: JAVA_TYPES,
        constants: JAVA_CONSTANTS,
        capitalized_types: true,
        at_attributes: true,
        ..BASE
    },
    Spec {
        names: "ruby rb rake gemspec podspec crystal cr",
        line_comments: &["#"],
        multiline_strings: true,
        keywords: "\
            alias and begin break case class def do else elsif end ensure for if in module next \
            not or redo rescue retry return self super then undef unless until when while yield \
            require require_relative include extend attr_reader attr_writer attr_accessor private \
            protected public lambda proc puts raise",
        constants: "true false nil __FILE__ __dir__",
        capitalized_types: true,
        ..BASE
    },
    Spec {
        names: "php",
        line_comments: &["//", "#"],
        block_comment: Some(("/*", "*/")),
        multiline_strings: true,
        keywords: "\
            abstract and array as break case catch class clone const continue declare default do \
            echo else elseif empty enddeclare endfor endforeach endif endswitch endwhile extends \
            final finally fn for foreach function global if implements include include_once \
            instanceof interface isset list match namespace new or print private protected public \
            readonly require require_once return static switch throw trait try unset use var while \
            yield enum",
        types: "int float string bool void mixed callable iterable",
        constants: "true false null TRUE FALSE NULL",
        capitalized_types: true,
        dollar_variables: true,
        hash_needs_space: true,
        ..BASE
    },
    Spec {
        names: "lua",
        line_comments: &["--"],
        block_comment: Some(("--[[", "]]")),
        keywords: "\
            and break do else elseif end for function goto if in local not or repeat return then \
            until while",
        constants: "true false nil",
        ..BASE
    },
    Spec {
        names: "sql psql pgsql mysql sqlite plsql tsql",
        line_comments: &["--"],
        block_comment: Some(("/*", "*/")),
        keywords: "\
            select from where and or not insert into values update set delete create table index \
            view drop alter add column primary key foreign references join inner left right outer \
            full cross on as group by order having limit offset distinct union all case when then \
            else end in is like between exists begin commit rollback transaction with returning \
            default unique check constraint if cascade asc desc trigger function procedure return \
            returns declare grant revoke explain analyze conflict do nothing using",
        types: "\
            int integer bigint smallint serial bigserial text varchar char boolean bool date time \
            timestamp timestamptz numeric decimal real float double blob json jsonb uuid bytea",
        constants: "null true false",
        case_insensitive: true,
        ..BASE
    },
    Spec {
        names: "haskell hs elm purescript purs",
        line_comments: &["--"],
        block_comment: Some(("{-", "-}")),
        nested_comments: true,
        quotes: b"\"",
        keywords: "\
            case class data default deriving do else if import in infix infixl infixr instance let \
            module newtype of then type where qualified hiding forall exposing port",
        constants: "True False Nothing Just",
        capitalized_types: true,
        ..BASE
    },
    Spec {
        names: "elixir ex exs erlang erl",
        line_comments: &["#", "%"],
        multiline_strings: true,
        triple_quotes: true,
        keywords: "\
            def defp defmodule defmacro defstruct defprotocol defimpl do end fn if else unless \
            case cond with for when in import alias require use receive after try rescue catch \
            raise quote unquote module export of begin",
        constants: "true false nil",
        capitalized_types: true,
        at_attributes: true,
        ..BASE
    },
    Spec {
        names: "css scss sass less styl postcss",
        line_comments: &["//"],
        block_comment: Some(("/*", "*/")),
        keywords: "\
            @media @import @keyframes @font-face @supports @use @mixin @include @extend @if @else \
            @each @function @return !important",
        constants: "\
            none auto inherit initial unset block inline flex grid absolute relative fixed sticky \
            solid bold center transparent",
        dollar_variables: true,
        dash_in_words: true,
        ..BASE
    },
    Spec {
        names: "dockerfile docker containerfile",
        line_comments: &["#"],
        multiline_strings: false,
        keywords: "\
            FROM RUN CMD LABEL EXPOSE ENV ADD COPY ENTRYPOINT VOLUME USER WORKDIR ARG ONBUILD \
            STOPSIGNAL HEALTHCHECK SHELL AS MAINTAINER",
        dollar_variables: true,
        hash_needs_space: true,
        ..BASE
    },
    Spec {
        names: "makefile make mk mak cmake just justfile",
        line_comments: &["#"],
        keywords: "\
            ifeq ifneq ifdef ifndef else endif include define endef export override .PHONY if \
            endif function endfunction foreach endforeach set project add_executable add_library \
            target_link_libraries find_package",
        dollar_variables: true,
        hash_needs_space: true,
        ..BASE
    },
    Spec {
        names: "perl pl pm",
        line_comments: &["#"],
        multiline_strings: true,
        keywords: "\
            my our local sub if elsif else unless while until for foreach return use require \
            package last next redo print die eq ne lt gt le ge and or not",
        dollar_variables: true,
        hash_needs_space: true,
        ..BASE
    },
    Spec {
        names: "r rscript",
        line_comments: &["#"],
        keywords: "if else repeat while function for in next break library require return",
        constants: "TRUE FALSE NULL NA Inf NaN T F",
        ..BASE
    },
    Spec {
        names: "lisp clojure clj cljs edn scheme scm racket el elisp",
        line_comments: &[";"],
        quotes: b"\"",
        keywords: "\
            defn defn- def defmacro defun defvar define let let* if when unless cond do fn lambda \
            loop recur ns require quote progn setq setf case",
        constants: "true false nil t",
        dash_in_words: true,
        ..BASE
    },
    Spec {
        names: "zig",
        line_comments: &["//"],
        keywords: "\
            const var fn pub return if else while for switch break continue defer errdefer try \
            catch struct enum union error comptime inline test orelse and or unreachable",
        types: "u8 u16 u32 u64 usize i8 i16 i32 i64 isize f32 f64 bool void anytype type",
        constants: "true false null undefined",
        ..BASE
    },
    Spec {
        names: "nix hcl tf terraform proto protobuf graphql gql prisma",
        line_comments: &["#", "//"],
        block_comment: Some(("/*", "*/")),
        multiline_strings: true,
        keywords: "\
            let in with rec inherit import if then else resource variable output module provider \
            data locals syntax message service rpc returns package option repeated optional oneof \
            enum type query mutation fragment on input schema model generator datasource",
        constants: "true false null",
        hash_needs_space: true,
        ..BASE
    },
    Spec {
        names: "ocaml ml mli fsharp fs fsi fsx sml reason re",
        line_comments: &["//"],
        block_comment: Some(("(*", "*)")),
        nested_comments: true,
        quotes: b"\"",
        multiline_strings: true,
        keywords: "\
            let rec in and match with function fun if then else begin end type of module struct \
            sig open include val mutable try raise when as do done for to downto while exception \
            functor method object inherit new lazy assert member namespace use yield async",
        types: "int float string bool char unit list array option ref exn",
        constants: "true false None Some Ok Error",
        capitalized_types: true,
        ..BASE
    },
    Spec {
        names: "powershell ps1 psm1 pwsh",
        line_comments: &["#"],
        block_comment: Some(("<#", "#>")),
        multiline_strings: true,
        keywords: "\
            begin break catch class continue data do dynamicparam else elseif end exit filter \
            finally for foreach from function if in param process return switch throw trap try \
            until using while -eq -ne -gt -ge -lt -le -like -notlike -match -notmatch -and -or \
            -not -contains",
        case_insensitive: true,
        dollar_variables: true,
        hash_needs_space: true,
        dash_in_words: true,
        ..BASE
    },
];

/// The lexer for values in YAML, TOML and INI files.
pub(super) static VALUES: Spec = Spec {
    names: "",
    line_comments: &["#"],
    quotes: b"\"'",
    triple_quotes: true,
    constants: "true false null yes no on off True False ~ inf nan",
    hash_needs_space: true,
    ..BASE
};
