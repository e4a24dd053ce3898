// Package cliflag parses command lines the way rg, fd and most Unix
// tools take them: long flags (--name, --name=VALUE, --name VALUE), short
// ones (-x, -xVALUE, -x VALUE, several at once as -wF, a counted one
// repeated as -uu), "--" ending the flags, and flags and arguments in any
// order unless told otherwise. It is the query client's flag layer: the
// standard library's flag package has no short names, no combined flags
// and no interspersed arguments, and the well-known layers that do either
// link package net (which makes indexctl a dynamically linked program)
// or bring far more than a client needs.
//
// Values are the standard library's flag.Value; a value whose IsBoolFlag
// reports true takes no argument (--name=false sets it false), and one
// that also implements Counter counts its uses. A FlagSet keeps its flags
// in the order they were defined, for help and completions.
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrHelp is returned by Parse for -h or --help when the set defines
// neither.
var ErrHelp = errors.New("cliflag: help requested")

// UnknownError is a flag the set does not define.
type UnknownError struct {
	Name  string // without dashes
	Short bool   // given as -x (Name is then one letter)
}

func (e *UnknownError) Error() string {
	if e.Short {
		return "unknown flag -" + e.Name
	}
	return "unknown flag --" + e.Name
}

// ValueError is a value its flag does not take.
type ValueError struct {
	Flag  *Flag
	Value string
	Err   error
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("invalid value %q for --%s: %v", e.Value, e.Flag.Name, e.Err)
}

func (e *ValueError) Unwrap() error { return e.Err }

// Counter is a flag.Value that counts its uses (-uu is two): Set is
// called once per use with "".
type Counter interface {
	flag.Value
	IsCount() bool
}

// Flag is one flag of a set.
type Flag struct {
	Name  string // the long name, without dashes
	Short string // the one-letter name, "" for none
	Usage string // one line; a word in backquotes names the value
	Value flag.Value
	// Changed reports whether the command line gave the flag.
	Changed bool
}

// TakesValue reports whether the flag needs an argument.
func (f *Flag) TakesValue() bool {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return false
	}
	if c, ok := f.Value.(Counter); ok && c.IsCount() {
		return false
	}
	return true
}

// FlagSet is a set of flags and the arguments left once they are parsed.
type FlagSet struct {
	name    string
	flags   []*Flag
	long    map[string]*Flag
	short   map[string]*Flag
	aliases map[string]string // another long name → the flag's
	args    []string
	// stopAtArg: the first argument ends the flags (a command's name
	// follows the global flags).
	stopAtArg bool
}

// New returns an empty set; name is the program or command, for messages.
func New(name string) *FlagSet {
	return &FlagSet{name: name, long: map[string]*Flag{}, short: map[string]*Flag{}, aliases: map[string]string{}}
}

// StopAtArgument makes the first argument that is not a flag end the
// flags: what follows it is left to Args.
func (s *FlagSet) StopAtArgument() { s.stopAtArg = true }

// Alias makes --alias another name of the flag name.
func (s *FlagSet) Alias(alias, name string) { s.aliases[alias] = name }

// Var defines a flag with the value v. It panics on a name defined twice:
// that is a programming error, not bad input.
func (s *FlagSet) Var(v flag.Value, name, short, usage string) *Flag {
	f := &Flag{Name: name, Short: short, Usage: usage, Value: v}
	s.add(f)
	return f
}

func (s *FlagSet) add(f *Flag) {
	if s.long[f.Name] != nil || f.Short != "" && s.short[f.Short] != nil {
		panic(fmt.Sprintf("cliflag: %s: flag %q (-%s) defined twice", s.name, f.Name, f.Short))
	}
	s.flags = append(s.flags, f)
	s.long[f.Name] = f
	if f.Short != "" {
		s.short[f.Short] = f
	}
}

// Include adds the flags of other to s (the same flags: a value set
// through either set is the other's too).
func (s *FlagSet) Include(other *FlagSet) {
	for _, f := range other.flags {
		if s.long[f.Name] == nil {
			s.add(f)
		}
	}
	for a, n := range other.aliases {
		s.aliases[a] = n
	}
}

// BoolVar defines a flag that takes no argument.
func (s *FlagSet) BoolVar(p *bool, name, short string, def bool, usage string) {
	*p = def
	s.Var((*boolValue)(p), name, short, usage)
}

// IntVar defines an integer flag.
func (s *FlagSet) IntVar(p *int, name, short string, def int, usage string) {
	*p = def
	s.Var((*intValue)(p), name, short, usage)
}

// Int64Var defines a 64-bit integer flag.
func (s *FlagSet) Int64Var(p *int64, name, short string, def int64, usage string) {
	*p = def
	s.Var((*int64Value)(p), name, short, usage)
}

// StringVar defines a string flag.
func (s *FlagSet) StringVar(p *string, name, short, def, usage string) {
	*p = def
	s.Var((*stringValue)(p), name, short, usage)
}

// StringsVar defines a repeatable string flag: each use adds its value,
// as given (a comma does not split it).
func (s *FlagSet) StringsVar(p *[]string, name, short, usage string) {
	s.Var((*stringsValue)(p), name, short, usage)
}

// CountVar defines a flag that counts its uses (-u, -uu).
func (s *FlagSet) CountVar(p *int, name, short, usage string) {
	s.Var((*countValue)(p), name, short, usage)
}

// DurationVar defines a flag of a time.Duration ("1m30s").
func (s *FlagSet) DurationVar(p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	s.Var((*durationValue)(p), name, short, usage)
}

// Get returns the value of the flag name: a bool, int, int64, string,
// []string or time.Duration, as the flag is (nil for no such flag).
func (s *FlagSet) Get(name string) any {
	if f := s.Lookup(name); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			return g.Get()
		}
	}
	return nil
}

// On reports whether the flag name is a true bool.
func (s *FlagSet) On(name string) bool {
	b, _ := s.Get(name).(bool)
	return b
}

// Lookup returns the flag of that long name (or alias), or nil.
func (s *FlagSet) Lookup(name string) *Flag {
	if n, ok := s.aliases[name]; ok {
		name = n
	}
	return s.long[name]
}

// Changed reports whether the command line gave the flag name.
func (s *FlagSet) Changed(name string) bool {
	f := s.Lookup(name)
	return f != nil && f.Changed
}

// Flags returns the flags in the order they were defined.
func (s *FlagSet) Flags() []*Flag { return s.flags }

// Args returns the arguments that are not flags, in order.
func (s *FlagSet) Args() []string { return s.args }

// Parse parses args (without the program's name): the flags set their
// values, the rest are Args.
func (s *FlagSet) Parse(args []string) error {
	s.args = nil
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			s.args = append(s.args, args[i+1:]...)
			return nil
		case len(a) < 2 || a[0] != '-':
			if s.stopAtArg {
				s.args = append(s.args, args[i:]...)
				return nil
			}
			s.args = append(s.args, a)
		case a[1] == '-':
			n, err := s.parseLong(a[2:], args[i+1:])
			if err != nil {
				return err
			}
			i += n
		default:
			n, err := s.parseShort(a[1:], args[i+1:])
			if err != nil {
				return err
			}
			i += n
		}
	}
	return nil
}

// parseLong parses --arg (arg without the dashes), its value taken from
// rest when not given as --name=value; it returns how many of rest it
// took.
func (s *FlagSet) parseLong(arg string, rest []string) (int, error) {
	name, value, hasValue := strings.Cut(arg, "=")
	f := s.Lookup(name)
	if f == nil {
		if name == "help" {
			return 0, ErrHelp
		}
		return 0, &UnknownError{Name: name}
	}
	used := 0
	if !hasValue && f.TakesValue() {
		if len(rest) == 0 {
			return 0, fmt.Errorf("flag needs an argument: --%s", f.Name)
		}
		value, used = rest[0], 1
	}
	if hasValue && !f.TakesValue() {
		if _, ok := f.Value.(Counter); ok {
			return 0, fmt.Errorf("flag takes no argument: --%s", f.Name)
		}
	}
	if !hasValue && !f.TakesValue() {
		value = "true"
		if _, ok := f.Value.(Counter); ok {
			value = ""
		}
	}
	return used, s.set(f, value)
}

// parseShort parses -arg (arg without the dash): flags that take no
// value, then at most one that does, its value the rest of arg or the
// next argument.
func (s *FlagSet) parseShort(arg string, rest []string) (int, error) {
	for j := 0; j < len(arg); j++ {
		c := arg[j : j+1]
		f := s.short[c]
		if f == nil {
			if c == "h" {
				return 0, ErrHelp
			}
			return 0, &UnknownError{Name: c, Short: true}
		}
		if !f.TakesValue() {
			value := "true"
			if _, ok := f.Value.(Counter); ok {
				value = ""
			}
			if err := s.set(f, value); err != nil {
				return 0, err
			}
			continue
		}
		switch {
		case j+1 < len(arg):
			return 0, s.set(f, strings.TrimPrefix(arg[j+1:], "="))
		case len(rest) > 0:
			return 1, s.set(f, rest[0])
		}
		return 0, fmt.Errorf("flag needs an argument: -%s (--%s)", c, f.Name)
	}
	return 0, nil
}

func (s *FlagSet) set(f *Flag, value string) error {
	if err := f.Value.Set(value); err != nil {
		return &ValueError{Flag: f, Value: value, Err: err}
	}
	f.Changed = true
	return nil
}

// ValueName returns the name of the flag's value, for help (the word in
// backquotes in its usage, else none for a flag that takes no argument,
// else "VALUE"), and the usage without the backquotes.
func ValueName(f *Flag) (name, usage string) {
	usage = f.Usage
	if i := strings.IndexByte(usage, '`'); i >= 0 {
		if j := strings.IndexByte(usage[i+1:], '`'); j >= 0 {
			name = usage[i+1 : i+1+j]
			return name, usage[:i] + name + usage[i+1+j+1:]
		}
	}
	if f.TakesValue() {
		name = "VALUE"
	}
	return name, usage
}

// Usages returns the flags' help, a line each: "  -x, --name VALUE  usage".
func (s *FlagSet) Usages() string {
	var b strings.Builder
	for _, f := range s.flags {
		name, usage := ValueName(f)
		left := "      --" + f.Name
		if f.Short != "" {
			left = "  -" + f.Short + ", --" + f.Name
		}
		if name != "" {
			left += " " + name
		}
		fmt.Fprintf(&b, "%-28s %s\n", left, usage)
	}
	return b.String()
}

// The values of the flag types.

type boolValue bool

func (b *boolValue) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*b = boolValue(v)
	return nil
}
func (b *boolValue) String() string   { return strconv.FormatBool(bool(*b)) }
func (b *boolValue) IsBoolFlag() bool { return true }
func (b *boolValue) Get() any         { return bool(*b) }

type intValue int

func (i *intValue) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return errors.New("want an integer")
	}
	*i = intValue(v)
	return nil
}
func (i *intValue) String() string { return strconv.Itoa(int(*i)) }
func (i *intValue) Get() any       { return int(*i) }

type int64Value int64

func (i *int64Value) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return errors.New("want an integer")
	}
	*i = int64Value(v)
	return nil
}
func (i *int64Value) String() string { return strconv.FormatInt(int64(*i), 10) }
func (i *int64Value) Get() any       { return int64(*i) }

type stringValue string

func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Get() any           { return string(*s) }

type stringsValue []string

func (s *stringsValue) Set(v string) error { *s = append(*s, v); return nil }
func (s *stringsValue) String() string     { return strings.Join(*s, ",") }
func (s *stringsValue) Get() any           { return []string(*s) }

type countValue int

func (c *countValue) Set(string) error { *c++; return nil }
func (c *countValue) String() string   { return strconv.Itoa(int(*c)) }
func (c *countValue) IsCount() bool    { return true }
func (c *countValue) Get() any         { return int(*c) }

type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 30s or 5m")
	}
	*d = durationValue(v)
	return nil
}
func (d *durationValue) String() string { return time.Duration(*d).String() }
func (d *durationValue) Get() any       { return time.Duration(*d) }
