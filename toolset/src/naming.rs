//! Tool and argument names: deterministic, collision-free, accepted by real clients.

/// Sets of names: looked up, never iterated, so the hasher cannot change any output.
type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

/// FNV-1a: a stable hash (unlike `DefaultHasher`, it never changes between Rust releases).
pub fn stable_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Six base-36 characters of the stable hash of `s`.
pub fn short_hash(s: &str) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut h = stable_hash(s);
    let mut out = String::with_capacity(6);
    for _ in 0..6 {
        out.push(DIGITS[(h % 36) as usize] as char);
        h /= 36;
    }
    out
}

/// `snake_case` restricted to `[a-z0-9_]`, no leading/trailing/double underscores.
pub fn snake(s: &str) -> String {
    if is_snake(s) {
        return s.to_string(); // already snake_case (names are snaked twice: base, then tool)
    }
    // Separators heck does not know about become spaces first.
    let spaced: Vec<u8> = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c as u8
            } else {
                b' '
            }
        })
        .collect();
    let snake = ascii_snake_case(&spaced);
    let mut out = String::with_capacity(snake.len());
    for c in snake.chars() {
        let c = if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '_'
        };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// Whether `snake` leaves `s` as it is: `[a-z0-9]` words joined by single underscores.
fn is_snake(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('_')
        && !s.ends_with('_')
        && !s.contains("__")
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// `heck`'s `to_snake_case` for ASCII letters, digits and spaces, without its per-character
/// formatting (a third of converting Kubernetes' spec went there): the same word boundaries
/// (lower -> upper; upper -> upper followed by lower; digits take the case before them).
fn ascii_snake_case(s: &[u8]) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum Mode {
        Boundary,
        Lower,
        Upper,
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut first = true;
    let mut emit = |word: &[u8], out: &mut String| {
        if !std::mem::replace(&mut first, false) {
            out.push('_');
        }
        out.extend(word.iter().map(|b| b.to_ascii_lowercase() as char));
    };
    for word in s.split(|b| *b == b' ') {
        let (mut init, mut mode) = (0, Mode::Boundary);
        for (i, &c) in word.iter().enumerate() {
            let Some(&next) = word.get(i + 1) else {
                emit(&word[init..], &mut out);
                break;
            };
            let next_mode = if c.is_ascii_lowercase() {
                Mode::Lower
            } else if c.is_ascii_uppercase() {
                Mode::Upper
            } else {
                mode
            };
            if next_mode == Mode::Lower && next.is_ascii_uppercase() {
                emit(&word[init..=i], &mut out);
                (init, mode) = (i + 1, Mode::Boundary);
            } else if mode == Mode::Upper && c.is_ascii_uppercase() && next.is_ascii_lowercase() {
                emit(&word[init..i], &mut out);
                (init, mode) = (i, Mode::Boundary);
            } else {
                mode = next_mode;
            }
        }
    }
    out
}

/// The default tool-name prefix: the first significant word of the API title, kept short.
pub fn prefix_from_title(title: &str) -> String {
    const STOP: &[&str] = &[
        "api",
        "apis",
        "the",
        "a",
        "an",
        "of",
        "for",
        "and",
        "swagger",
        "openapi",
        "rest",
        "restful",
        "http",
        "https",
        "web",
        "service",
        "services",
        "platform",
        "public",
        "spec",
        "specification",
        "server",
        "sample",
        "example",
        "official",
        "v",
    ];
    for word in title.split(|c: char| !c.is_alphanumeric()) {
        let w: String = word
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        if w.is_empty() || STOP.contains(&w.as_str()) {
            continue;
        }
        if w.starts_with('v') && w[1..].chars().all(|c| c.is_ascii_digit() || c == '.') {
            continue;
        }
        if w.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let mut w = w;
        w.truncate(16);
        return w;
    }
    String::new()
}

/// Allocates unique tool names within `max_len` characters.
pub struct NameAllocator {
    prefix: String,
    max_len: usize,
    taken: HashSet<String>,
}

impl NameAllocator {
    pub fn new(prefix: &str, max_len: usize) -> Self {
        Self {
            prefix: snake(prefix),
            max_len: max_len.clamp(16, 128),
            taken: HashSet::default(),
        }
    }

    /// Reserves a name that must not be given to any tool (e.g. fixed tools of a mode).
    pub fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }

    /// The name for an operation. `base` is the operation's own name (operationId or derived);
    /// `identity` (method + path) disambiguates collisions with a stable hash.
    pub fn allocate(&mut self, base: &str, identity: &str) -> String {
        let mut core = snake(base);
        if core.is_empty() {
            core = "operation".into();
        }
        let mut full = if self.prefix.is_empty() {
            core
        } else {
            format!("{}_{}", self.prefix, core)
        };
        if full.starts_with(|c: char| c.is_ascii_digit()) {
            full = format!("op_{full}");
        }
        let mut name = self.fit(&full, &full);
        if self.taken.contains(&name) {
            name = self.fit_with_hash(&full, identity);
            let mut salt = 1;
            while self.taken.contains(&name) {
                name = self.fit_with_hash(&full, &format!("{identity}#{salt}"));
                salt += 1;
            }
        }
        self.taken.insert(name.clone());
        name
    }

    fn fit(&self, full: &str, hash_source: &str) -> String {
        if full.len() <= self.max_len {
            full.to_string()
        } else {
            self.fit_with_hash(full, hash_source)
        }
    }

    fn fit_with_hash(&self, full: &str, hash_source: &str) -> String {
        let h = short_hash(hash_source);
        let keep = self.max_len - h.len() - 1;
        let mut head: String = full.chars().take(keep).collect();
        while head.ends_with('_') {
            head.pop();
        }
        format!("{head}_{h}")
    }
}

/// Property names accepted by the strictest clients: `^[a-zA-Z0-9_.-]{1,64}$`.
pub fn sanitize_arg(name: &str) -> String {
    let valid = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    if (1..=64).contains(&name.len()) && name.bytes().all(valid) && !name.ends_with('_') {
        return name.to_string();
    }
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // `filter[name]` -> `filter_name`, not `filter_name_`.
    while s.ends_with('_') && s.len() > 1 {
        s.pop();
    }
    if s.is_empty() {
        s.push_str("arg");
    }
    if s.len() > 64 {
        let h = short_hash(name);
        s.truncate(57);
        s = format!("{s}_{h}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_leaves_snake_case_as_it_is() {
        // Every string of up to 5 characters over a small alphabet that `is_snake` accepts
        // comes out of the full conversion unchanged.
        let alphabet = ['a', 'z', '0', '9', '_', 'b'];
        let mut words = vec![String::new()];
        for _ in 0..5 {
            let next: Vec<String> = words
                .iter()
                .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                .collect();
            for w in &next {
                if is_snake(w) {
                    let spaced: Vec<u8> = w
                        .bytes()
                        .map(|b| if b == b'_' { b' ' } else { b })
                        .collect();
                    assert_eq!(&ascii_snake_case(&spaced), w);
                }
            }
            words = next;
        }
        assert!(!is_snake("a__b") && !is_snake("_a") && !is_snake("Ab") && !is_snake(""));
    }

    #[test]
    fn snake_cases() {
        assert_eq!(snake("orgs/list"), "orgs_list");
        assert_eq!(snake("GetPetById"), "get_pet_by_id");
        assert_eq!(snake("get-user"), "get_user");
        assert_eq!(snake("__x__y__"), "x_y");
        assert_eq!(snake("repos/get-content"), "repos_get_content");
        assert_eq!(snake("Ünïcode op"), "n_code_op");
    }

    /// The ASCII port splits words exactly as `heck` does: every string of up to 7 characters
    /// over an alphabet with both cases, a digit and a separator, and real operationIds.
    #[test]
    fn ascii_snake_case_is_hecks() {
        use heck::ToSnakeCase;
        let alphabet = [b'a', b'B', b'c', b'D', b'1', b' '];
        let mut checked = 0;
        for len in 0..=7u32 {
            for mut n in 0..alphabet.len().pow(len) {
                let mut s = Vec::with_capacity(len as usize);
                for _ in 0..len {
                    s.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                let text = String::from_utf8(s.clone()).expect("ascii");
                assert_eq!(ascii_snake_case(&s), text.to_snake_case(), "{text:?}");
                checked += 1;
            }
        }
        assert!(checked > 300_000);
        for id in [
            "listCoreV1NamespacedPersistentVolumeClaim",
            "HTTPServerGetURLForID2",
            "getV2ABTestsXMLHttpRequest",
            "repos get content",
            "PostApiV1UsersMeOAuth2Tokens",
            "a1B2c3D4",
        ] {
            assert_eq!(ascii_snake_case(id.as_bytes()), id.to_snake_case(), "{id}");
        }
    }

    #[test]
    fn prefixes() {
        assert_eq!(prefix_from_title("Swagger Petstore"), "petstore");
        assert_eq!(prefix_from_title("GitHub v3 REST API"), "github");
        assert_eq!(prefix_from_title("DigitalOcean API"), "digitalocean");
        assert_eq!(prefix_from_title("Twilio - Api"), "twilio");
        assert_eq!(prefix_from_title("API"), "");
    }

    #[test]
    fn collisions_get_stable_hashes() {
        let mut a = NameAllocator::new("pet", 64);
        let first = a.allocate("getUser", "GET /a");
        let second = a.allocate("get_user", "GET /b");
        assert_eq!(first, "pet_get_user");
        assert!(second.starts_with("pet_get_user_") && second.len() == "pet_get_user_".len() + 6);
        // The same operation gets the same name in another allocator (stability).
        let mut b = NameAllocator::new("pet", 64);
        b.allocate("get_user", "GET /zzz");
        assert_eq!(b.allocate("GetUser", "GET /b"), second);
    }

    #[test]
    fn long_names_are_cut_with_hash() {
        let mut a = NameAllocator::new("p", 64);
        let long = "x".repeat(100);
        let n = a.allocate(&long, "GET /");
        assert_eq!(n.len(), 64);
        let n2 = a.allocate(&format!("{long}y"), "GET /y");
        assert_ne!(n, n2);
        assert_eq!(n2.len(), 64);
    }

    #[test]
    fn arg_names() {
        assert_eq!(sanitize_arg("filter[name]"), "filter_name");
        assert_eq!(sanitize_arg("X-Request-ID"), "X-Request-ID");
        assert_eq!(sanitize_arg("expand[]"), "expand");
    }
}
