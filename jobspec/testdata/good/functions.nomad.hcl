locals {
  words = ["alpha", "beta", "gamma"]
}

job "functions" {
  meta {
    format       = format("%s-%03d", "node", 7)
    join         = join(",", local.words)
    upper        = upper("shout")
    lower        = lower("QUIET")
    title        = title("hello world")
    json         = jsonencode({ a = 1, b = ["x"] })
    jsondecode   = jsondecode("{\"k\":\"v\"}").k
    merged       = jsonencode(merge({ a = 1 }, { b = 2 }, { a = 3 }))
    regex_repl   = regex_replace("a1b22c", "[0-9]+", "_")
    replace      = replace("a.b.c", ".", "/")
    split_len    = length(split(",", "a,b,c,d"))
    element      = element(local.words, 1)
    concat       = join(" ", concat(["a"], ["b", "c"]))
    formatlist   = join(";", formatlist("%s=%d", ["x", "y"], [1, 2]))
    coalesce     = coalesce("", "fallback")
    trimspace    = trimspace("  padded  ")
    trimprefix   = trimprefix("v1.2.3", "v")
    trimsuffix   = trimsuffix("file.txt", ".txt")
    substr       = substr("abcdef", 1, 3)
    strrev       = strrev("abc")
    minmax       = "${min(4, 2, 9)}/${max(4, 2, 9)}"
    abs          = abs(-5)
    ceilfloor    = "${ceil(1.2)}/${floor(1.8)}"
    keys         = join(",", keys({ b = 1, a = 2 }))
    values       = join(",", values({ b = "1", a = "2" }))
    zipmap       = jsonencode(zipmap(["a", "b"], [1, 2]))
    range        = jsonencode(range(3))
    reverse      = join(",", reverse(local.words))
    distinct     = join(",", distinct(["a", "a", "b"]))
    flatten      = jsonencode(flatten([["a"], ["b", ["c"]]]))
    contains     = contains(local.words, "beta")
    sort         = join(",", sort(["c", "a", "b"]))
    setunion     = join(",", sort(setunion(["a"], ["b"], ["a"])))
    parseint     = parseint("ff", 16)
    pow          = pow(2, 10)
    signum       = signum(-3)
    lookup       = lookup({ a = "x" }, "b", "dflt")
    compact      = join(",", compact(["a", "", "b"]))
    base64       = base64encode("hello")
    base64dec    = base64decode("aGVsbG8=")
    urlencode    = urlencode("a b&c")
    md5          = md5("hello")
    sha1         = sha1("hello")
    sha256       = sha256("hello")
    sha512       = substr(sha512("hello"), 0, 16)
    uuidv5       = uuidv5("dns", "example.com")
    uuidv4_len   = strlen(uuidv4())
    cidrhost     = cidrhost("10.0.0.0/16", 5)
    cidrnetmask  = cidrnetmask("10.0.0.0/12")
    cidrsubnet   = cidrsubnet("10.1.0.0/16", 8, 3)
    cidrsubnets  = join(",", cidrsubnets("10.1.0.0/16", 8, 4))
    try          = try(local.missing, "tried")
    can          = can(local.missing)
    convert      = jsonencode(convert(["1", "2"], list(number)))
    timeadd      = timeadd("2024-01-01T00:00:00Z", "90m")
    formatdate   = formatdate("YYYY-MM-DD", "2024-03-05T10:00:00Z")
    indent       = indent(2, "a\nb")
    chomp        = chomp("line\n")
    log          = log(8, 2)
    slice        = join(",", slice(local.words, 0, 2))
    regex        = regex("[a-z]+", "123abc456")
  }

  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
