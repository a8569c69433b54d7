package lenient

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// readString reads a string field: a JSON string, or a number or boolean as
// its JSON text. (readItem sanitizes it afterwards, with the other strings.)
func readString(raw []byte) (string, bool) {
	switch k := FirstByte(raw); {
	case k == '"':
		return String(raw)
	case k == 't' || k == 'f':
		b, ok := readBool(raw)
		return strconv.FormatBool(b), ok
	case k == '-' || (k >= '0' && k <= '9'):
		return strings.TrimSpace(string(raw)), true
	}
	return "", false
}

// readBool reads a boolean: true, false, or the strings "true" and "false"
// in any case.
func readBool(raw []byte) (value, ok bool) {
	switch FirstByte(raw) {
	case 't', 'f':
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err == nil
	case '"':
		s, _ := String(raw)
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// numericText is the text of a JSON number, or of a string holding one.
func numericText(raw []byte) (string, bool) {
	switch FirstByte(raw) {
	case '"':
		s, ok := String(raw)
		return strings.TrimSpace(s), ok
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return strings.TrimSpace(string(raw)), true
	}
	return "", false
}

// readInt reads an integer: a JSON number or numeric string whose value is a
// whole number that fits an int64 (2.0 and 1e3 are whole).
func readInt(raw []byte) (int64, bool) {
	s, ok := numericText(raw)
	if !ok {
		return 0, false
	}
	d, ok := parseExactDecimal(s)
	if !ok {
		return 0, false
	}
	return d.int64()
}

// readDecimal reads a decimal: a JSON number or a numeric string, in the
// form the API server stores numbers in.
func readDecimal(raw []byte) (swv1.Decimal, bool) {
	s, ok := numericText(raw)
	if !ok {
		return "", false
	}
	exact, ok := parseExactDecimal(s)
	if !ok {
		return "", false
	}
	var d swv1.Decimal
	if err := d.UnmarshalJSON([]byte(exact.String())); err != nil {
		return "", false
	}
	return d, true
}

// readMillicores reads a CPU size in millicores: a whole number (JSON or in
// a string), or a Kubernetes quantity of cores with a suffix ("500m",
// "2k"). A value that is not a whole number of millicores is refused.
func readMillicores(raw []byte) (int64, bool) {
	s, ok := numericText(raw)
	if !ok {
		return 0, false
	}
	if d, ok := parseExactDecimal(s); ok {
		return d.int64()
	}
	if FirstByte(raw) != '"' {
		return 0, false
	}
	q, ok := parseQuantity(s)
	if !ok {
		return 0, false
	}
	q.exp += 3 // cores to millicores
	return q.int64()
}

// readGigabytes reads a memory size in gigabytes (10^9 bytes): a number
// (JSON or in a string), or a Kubernetes quantity of bytes with a suffix
// ("2Gi" is 2.147483648, "500M" is 0.5). A quantity whose exact value in
// gigabytes the API server cannot store as a number is refused.
func readGigabytes(raw []byte) (swv1.Decimal, bool) {
	if d, ok := readDecimal(raw); ok {
		return d, true
	}
	if FirstByte(raw) != '"' {
		return "", false
	}
	s, _ := numericText(raw)
	q, ok := parseQuantity(s)
	if !ok {
		return "", false
	}
	q.exp -= 9 // bytes to gigabytes
	exact := q.String()
	var d swv1.Decimal
	if err := d.UnmarshalJSON([]byte(exact)); err != nil {
		return "", false
	}
	stored, ok := parseExactDecimal(string(d))
	if !ok || !stored.equal(q) {
		return "", false // not exact once stored: kept as sent instead
	}
	return d, true
}

// decimal is an exact decimal number: digits × 10^exp, digits without
// leading or trailing zeros ("" is zero).
type decimal struct {
	neg    bool
	digits string
	exp    int
}

// maxExponent bounds the exponents parsed, so that no text can make the
// operator build a number of a million digits.
const maxExponent = 400

// parseExactDecimal parses a JSON number's syntax (an optional minus, digits, an
// optional fraction and exponent) exactly.
func parseExactDecimal(s string) (decimal, bool) {
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	mantissa, exponent, hasExp := strings.Cut(strings.ToLower(s), "e")
	whole, frac, _ := strings.Cut(mantissa, ".")
	if whole == "" || !allDigits(whole) || !allDigits(frac) || (strings.Contains(mantissa, ".") && frac == "") {
		return decimal{}, false
	}
	if hasExp {
		e, err := strconv.Atoi(strings.TrimPrefix(exponent, "+"))
		if err != nil || e > maxExponent || e < -maxExponent {
			return decimal{}, false
		}
		d.exp = e
	}
	d.digits = whole + frac
	d.exp -= len(frac)
	return d.normalized(), true
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (d decimal) normalized() decimal {
	d.digits = strings.TrimLeft(d.digits, "0")
	for strings.HasSuffix(d.digits, "0") {
		d.digits = d.digits[:len(d.digits)-1]
		d.exp++
	}
	if d.digits == "" {
		return decimal{}
	}
	return d
}

func (d decimal) equal(o decimal) bool { return d.normalized() == o.normalized() }

// int64 returns d when it is a whole number that fits an int64.
func (d decimal) int64() (int64, bool) {
	n := d.normalized()
	if n.digits == "" {
		return 0, true
	}
	if n.exp < 0 || len(n.digits)+n.exp > 19 {
		return 0, false
	}
	text := n.digits + strings.Repeat("0", n.exp)
	if n.neg {
		text = "-" + text
	}
	v, err := strconv.ParseInt(text, 10, 64)
	return v, err == nil
}

// String writes d as a plain decimal (no exponent).
func (d decimal) String() string {
	n := d.normalized()
	if n.digits == "" {
		return "0"
	}
	var s string
	switch {
	case n.exp >= 0:
		s = n.digits + strings.Repeat("0", n.exp)
	case -n.exp < len(n.digits):
		cut := len(n.digits) + n.exp
		s = n.digits[:cut] + "." + n.digits[cut:]
	default:
		s = "0." + strings.Repeat("0", -n.exp-len(n.digits)) + n.digits
	}
	if n.neg {
		s = "-" + s
	}
	return s
}

// quantitySuffixes are the suffixes of Kubernetes quantities: decimal ones
// as a power of ten, binary ones as a power of two.
var quantitySuffixes = []struct {
	suffix      string
	exp10, exp2 int
}{
	{"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
	{"n", -9, 0}, {"u", -6, 0}, {"m", -3, 0}, {"k", 3, 0}, {"M", 6, 0}, {"G", 9, 0}, {"T", 12, 0}, {"P", 15, 0}, {"E", 18, 0},
}

// parseQuantity parses a Kubernetes quantity with a suffix ("500m", "2Gi",
// "1.5G") exactly, in the quantity's base unit (cores, bytes).
func parseQuantity(s string) (decimal, bool) {
	for _, q := range quantitySuffixes {
		number, ok := strings.CutSuffix(s, q.suffix)
		if !ok {
			continue
		}
		number = strings.TrimPrefix(number, "+")
		if strings.ContainsAny(number, "eE") {
			return decimal{}, false // no exponent beside a suffix
		}
		d, ok := parseExactDecimal(number)
		if !ok {
			return decimal{}, false
		}
		d.exp += q.exp10
		if q.exp2 > 0 && d.digits != "" {
			n, _ := new(big.Int).SetString(d.digits, 10)
			n.Lsh(n, uint(q.exp2))
			d.digits = n.String()
		}
		return d.normalized(), true
	}
	return decimal{}, false
}
