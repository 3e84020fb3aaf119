package faults

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// ParamType says how a parameter's value is written.
type ParamType string

const (
	TypeInt       ParamType = "int"
	TypeFloat     ParamType = "float"
	TypeDuration  ParamType = "duration"
	TypeBool      ParamType = "bool"
	TypeString    ParamType = "string"
	TypePattern   ParamType = "pattern"
	TypeDirection ParamType = "direction"
	TypeChoice    ParamType = "choice"
	// TypeSize is a byte count: a whole number with an optional binary
	// suffix (B, KiB, MiB, GiB), e.g. 4096, 64KiB, 1MiB.
	TypeSize ParamType = "size"
)

// Param documents one parameter of a fault or of the shared trigger.
type Param struct {
	Name    string
	Type    ParamType
	Default string // "" means no default (unset)
	Choices []string
	// Forever allows the duration "forever" (and forbids 0, which would be
	// an ambiguous way to say it).
	Forever bool
	Doc     string
	// HTTPOnly marks a parameter that means something on HTTP only (which
	// stream, which side of a connection): the stdio transports refuse a
	// fault that sets it, rather than act as if it were not there.
	HTTPOnly bool
}

// Usage is the one-line description `mcpchaos faults` prints.
func (p Param) Usage() string {
	t := string(p.Type)
	if p.Type == TypeChoice {
		t = strings.Join(p.Choices, "|")
	}
	s := fmt.Sprintf("%s=%s", p.Name, t)
	if p.Default != "" {
		s += " (default " + p.Default + ")"
	}
	return s + ": " + p.Doc
}

func (p Param) check(v string) error {
	switch p.Type {
	case TypeInt:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a whole number >= 0", v)
		}
	case TypeFloat:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) { // NaN fails both comparisons
			return fmt.Errorf("%q is not a probability between 0 and 1", v)
		}
	case TypeDuration:
		if p.Forever {
			if v == "forever" {
				return nil
			}
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("%q is not a duration like 250ms, 5s or forever", v)
			}
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a duration like 0s, 250ms or 5s", v)
		}
	case TypeBool:
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
	case TypePattern:
		_, err := ParsePattern(v)
		return err
	case TypeDirection:
		_, err := wire.ParseDirection(v)
		return err
	case TypeChoice:
		for _, c := range p.Choices {
			if v == c {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(p.Choices, ", "))
	case TypeString:
		if v == "" {
			return fmt.Errorf("empty value")
		}
	case TypeSize:
		_, err := ParseSize(v)
		return err
	}
	return nil
}

// sizeUnits are the suffixes a size may carry, longest first so that "KiB"
// is not read as "B".
var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// ParseSize reads a byte count such as 4096, 512B, 64KiB, 1MiB or 2GiB.
// Decimal units (KB, MB) are refused rather than guessed at.
func ParseSize(v string) (int64, error) {
	num, mult := v, int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(v, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || (n > 0 && n > (1<<62)/mult) {
		return 0, fmt.Errorf("%q is not a size like 4096, 64KiB or 1MiB (a whole number of bytes with an optional B, KiB, MiB or GiB)", v)
	}
	return n * mult, nil
}

// Values are a fault's parameters after parsing: every value has been checked
// against its Param, so the accessors cannot fail.
type Values struct {
	set    map[string]string
	params map[string]Param
}

func (v Values) raw(name string) (string, bool) {
	if s, ok := v.set[name]; ok {
		return s, true
	}
	p, ok := v.params[name]
	if !ok {
		panic("faults: parameter " + name + " is not declared") // a registry bug, caught by tests
	}
	return p.Default, p.Default != ""
}

// Has reports whether the parameter was given or has a default.
func (v Values) Has(name string) bool {
	_, ok := v.raw(name)
	return ok
}

func (v Values) Int(name string) int {
	s, _ := v.raw(name)
	n, _ := strconv.Atoi(s)
	return n
}

func (v Values) Float(name string) float64 {
	s, _ := v.raw(name)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// Duration returns 0 for "forever" and for an unset parameter.
func (v Values) Duration(name string) time.Duration {
	s, _ := v.raw(name)
	d, _ := time.ParseDuration(s)
	return d
}

func (v Values) Bool(name string) bool {
	s, _ := v.raw(name)
	b, _ := strconv.ParseBool(s)
	return b
}

func (v Values) String(name string) string {
	s, _ := v.raw(name)
	return s
}

func (v Values) Pattern(name string) Pattern {
	s, _ := v.raw(name)
	p, _ := ParsePattern(s)
	return p
}

// Direction returns 0 when the parameter is unset.
func (v Values) Direction(name string) wire.Direction {
	s, ok := v.raw(name)
	if !ok {
		return 0
	}
	d, _ := wire.ParseDirection(s)
	return d
}

// Size returns a size parameter in bytes, 0 when unset.
func (v Values) Size(name string) int64 {
	s, _ := v.raw(name)
	n, _ := ParseSize(s)
	return n
}
