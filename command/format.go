package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/ryanuber/columnize"
)

// formatList aligns "a|b|c" rows into columns two spaces apart, as
// Nomad's tables are.
func formatList(rows []string) string {
	return columns(rows, "  ")
}

// formatKV aligns "key|value" rows as "key = value".
func formatKV(rows []string) string {
	return columns(rows, " = ")
}

// columns lays the rows out with columnize, without the blanks it leaves
// at the end of a row whose last cells are empty.
func columns(rows []string, glue string) string {
	cfg := columnize.DefaultConfig()
	cfg.Glue = glue
	lines := strings.Split(columnize.Format(rows, cfg), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// shortID returns the first 8 characters of a UUID unless verbose.
func shortID(id string, verbose bool) string {
	if verbose || len(id) <= 8 {
		return id
	}
	return id[:8]
}

// formatTime renders a time as Nomad's CLI does (RFC 3339, local zone).
func formatTime(t time.Time) string {
	if t.IsZero() || t.Unix() <= 0 {
		return "N/A"
	}
	return t.Format(time.RFC3339)
}

// formatUnixNano renders a unix-nanoseconds timestamp.
func formatUnixNano(ns int64) string {
	if ns == 0 {
		return "N/A"
	}
	return formatTime(time.Unix(0, ns))
}

// prettyTimeDiff renders how long ago t was ("5s ago", "3m10s ago").
func prettyTimeDiff(t, now time.Time) string {
	if t.IsZero() || t.Unix() <= 0 {
		return "N/A"
	}
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds ago", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh ago", int(d.Hours())/24, int(d.Hours())%24)
}

// limit truncates s to n runes.
func limit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// outputFormat implements -json and -t: it prints obj as indented JSON or
// through a Go template. It reports false when neither is set.
func outputFormat(w io.Writer, errw io.Writer, asJSON bool, tmpl string, obj any) (bool, int) {
	if !asJSON && tmpl == "" {
		return false, 0
	}
	if asJSON && tmpl != "" {
		fmt.Fprintln(errw, "Both json and template formatting are not allowed")
		return true, 1
	}
	if asJSON {
		buf, err := json.MarshalIndent(obj, "", "    ")
		if err != nil {
			fmt.Fprintf(errw, "Error formatting the data: %s\n", err)
			return true, 1
		}
		fmt.Fprintln(w, string(buf))
		return true, 0
	}
	t, err := template.New("format").Parse(tmpl)
	if err != nil {
		fmt.Fprintf(errw, "Error parsing the template: %s\n", err)
		return true, 1
	}
	var out bytes.Buffer
	if err := t.Execute(&out, obj); err != nil {
		fmt.Fprintf(errw, "Error executing the template: %s\n", err)
		return true, 1
	}
	fmt.Fprintln(w, out.String())
	return true, 0
}

// humanBytes renders a byte count as Nomad's CLI does (64 MiB, 1.0 GiB).
func humanBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	v := float64(b) / float64(div)
	suffix := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[exp]
	if v == float64(uint64(v)) {
		return fmt.Sprintf("%d %s", uint64(v), suffix)
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sanitizeUUIDPrefix trims an ID prefix to an even number of hex digits,
// as the UUID index needs (hyphens are not counted).
func sanitizeUUIDPrefix(prefix string) string {
	hexLen := len(strings.ReplaceAll(prefix, "-", ""))
	if hexLen%2 == 1 {
		return prefix[:len(prefix)-1]
	}
	return prefix
}
