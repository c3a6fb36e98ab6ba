package actions

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// This file models what the GitHub Actions runner does with a step's output
// and command files, transcribed from actions/runner:
// src/Runner.Common/ActionCommand.cs (TryParseV2, TryParse, the unescape
// tables), src/Runner.Worker/ActionCommandManager.cs (TryProcessCommand,
// ValidateStopToken) and the file-command parser of GITHUB_OUTPUT and
// GITHUB_STATE. Tests feed the Writer's bytes through it and assert on what
// the runner would execute, not on the bytes alone.

// runnerCommand is one command the runner executed.
type runnerCommand struct {
	Name  string
	Props map[string]string
	Data  string
}

type runnerModel struct {
	registered map[string]bool // lower-case names
	stopped    bool
	stopToken  string
	executed   []runnerCommand // every command processed (stop/resume included)
	masks      []string
	errors     []string
	lines      []string // every log line, in order
}

func newRunnerModel() *runnerModel {
	m := &runnerModel{registered: map[string]bool{}}
	for _, c := range []string{
		"stop-commands", "set-env", "set-output", "save-state", "add-mask", "add-path",
		"add-matcher", "remove-matcher", "warning", "error", "notice", "debug",
		"group", "endgroup", "echo",
	} {
		m.registered[c] = true
	}
	return m
}

// runRunner processes a step's stdout as the runner does.
func runRunner(output string) *runnerModel {
	m := newRunnerModel()
	m.process(output)
	return m
}

// runnerLines splits output as .NET's StreamReader.ReadLine does: at "\r\n",
// "\r" or "\n".
func runnerLines(output string) []string {
	output = strings.ReplaceAll(output, "\r\n", "\n")
	output = strings.ReplaceAll(output, "\r", "\n")
	lines := strings.Split(output, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func (m *runnerModel) process(output string) {
	for _, line := range runnerLines(output) {
		m.lines = append(m.lines, line)
		m.processLine(line)
	}
}

// commands returns the executed commands other than stop-commands and the
// resume tokens: what untrusted text could have made the runner do.
func (m *runnerModel) commands() []runnerCommand {
	var out []runnerCommand
	for _, c := range m.executed {
		if c.Name == "stop-commands" || c.Name == "(resume)" {
			continue
		}
		out = append(out, c)
	}
	return out
}

func (m *runnerModel) processLine(input string) {
	if input == "" {
		return
	}
	cmd, ok := parseV2(input, m.registered)
	if !ok {
		cmd, ok = parseLegacy(input, m.registered)
	}
	if !ok {
		return
	}
	if m.stopped {
		if m.stopToken != "" && strings.EqualFold(cmd.Name, m.stopToken) {
			m.executed = append(m.executed, runnerCommand{Name: "(resume)", Data: cmd.Name})
			delete(m.registered, strings.ToLower(m.stopToken))
			m.stopped, m.stopToken = false, ""
		}
		return
	}
	if strings.EqualFold(cmd.Name, "stop-commands") {
		token := cmd.Data
		// ValidateStopToken: empty, "pause-logging" and registered command
		// names are refused (command processing goes on).
		if token == "" || strings.EqualFold(token, "pause-logging") || m.registered[strings.ToLower(token)] {
			m.errors = append(m.errors, fmt.Sprintf("invalid stop-commands token %q", token))
			return
		}
		m.executed = append(m.executed, cmd)
		m.stopped, m.stopToken = true, token
		m.registered[strings.ToLower(token)] = true
		return
	}
	m.executed = append(m.executed, cmd)
	if strings.EqualFold(cmd.Name, "add-mask") && strings.TrimSpace(cmd.Data) != "" {
		m.masks = append(m.masks, cmd.Data)
	}
}

// parseV2 is ActionCommand.TryParseV2: "::name k=v,k=v::data" after leading
// whitespace.
func parseV2(message string, registered map[string]bool) (runnerCommand, bool) {
	message = strings.TrimLeftFunc(message, unicode.IsSpace)
	if !strings.HasPrefix(message, "::") {
		return runnerCommand{}, false
	}
	end := strings.Index(message[2:], "::")
	if end < 0 {
		return runnerCommand{}, false
	}
	end += 2
	info := message[2:end]
	name, props, hasProps := strings.Cut(info, " ")
	if !registered[strings.ToLower(name)] {
		return runnerCommand{}, false
	}
	cmd := runnerCommand{Name: name, Props: map[string]string{}}
	if hasProps && strings.Index(info, " ") > 0 {
		for _, p := range strings.Split(strings.TrimSpace(props), ",") {
			if p == "" {
				continue
			}
			pair := splitRemoveEmpty(p, "=")
			if len(pair) == 2 {
				cmd.Props[strings.ToLower(pair[0])] = unescapeProperty(pair[1])
			}
		}
	}
	cmd.Data = unescapeData(message[end+2:])
	return cmd, true
}

// parseLegacy is ActionCommand.TryParse: "##[name k=v;k=v]data" anywhere in
// the line.
func parseLegacy(message string, registered map[string]bool) (runnerCommand, bool) {
	i := strings.Index(message, "##[")
	if i < 0 {
		return runnerCommand{}, false
	}
	rb := strings.IndexByte(message[i:], ']')
	if rb < 0 {
		return runnerCommand{}, false
	}
	rb += i
	info := message[i+3 : rb]
	name, props, hasProps := strings.Cut(info, " ")
	if !registered[strings.ToLower(name)] {
		return runnerCommand{}, false
	}
	cmd := runnerCommand{Name: name, Props: map[string]string{}}
	if hasProps && strings.Index(info, " ") > 0 {
		for _, p := range strings.Split(props, ";") {
			if p == "" {
				continue
			}
			pair := splitRemoveEmpty(p, "=")
			if len(pair) == 2 {
				cmd.Props[strings.ToLower(pair[0])] = unescapeLegacy(pair[1])
			}
		}
	}
	cmd.Data = unescapeLegacy(message[rb+1:])
	return cmd, true
}

// splitRemoveEmpty is string.Split(sep, count: 2, RemoveEmptyEntries).
func splitRemoveEmpty(s, sep string) []string {
	k, v, ok := strings.Cut(s, sep)
	switch {
	case !ok:
		return []string{s}
	case k == "" && v == "":
		return nil
	case k == "":
		return []string{v}
	case v == "":
		return []string{k}
	}
	return []string{k, v}
}

func unescapeData(s string) string {
	s = strings.ReplaceAll(s, "%0D", "\r")
	s = strings.ReplaceAll(s, "%0A", "\n")
	return strings.ReplaceAll(s, "%25", "%")
}

func unescapeProperty(s string) string {
	s = strings.ReplaceAll(s, "%0D", "\r")
	s = strings.ReplaceAll(s, "%0A", "\n")
	s = strings.ReplaceAll(s, "%3A", ":")
	s = strings.ReplaceAll(s, "%2C", ",")
	return strings.ReplaceAll(s, "%25", "%")
}

func unescapeLegacy(s string) string {
	s = strings.ReplaceAll(s, "%3B", ";")
	s = strings.ReplaceAll(s, "%0D", "\r")
	s = strings.ReplaceAll(s, "%0A", "\n")
	s = strings.ReplaceAll(s, "%5D", "]")
	return strings.ReplaceAll(s, "%25", "%")
}

// parseFileCommands is the runner's parser of GITHUB_OUTPUT / GITHUB_STATE
// (key=value lines and key<<DELIMITER heredocs).
func parseFileCommands(content string) (map[string]string, error) {
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		eq := strings.Index(line, "=")
		hd := strings.Index(line, "<<")
		switch {
		case eq >= 0 && (hd < 0 || eq < hd):
			key := line[:eq]
			if key == "" {
				return nil, fmt.Errorf("line %d: empty key", i+1)
			}
			out[key] = line[eq+1:]
		case hd >= 0 && (eq < 0 || hd < eq):
			key, delim := line[:hd], line[hd+2:]
			if key == "" || delim == "" {
				return nil, fmt.Errorf("line %d: invalid heredoc", i+1)
			}
			var value []string
			found := false
			for i++; i < len(lines); i++ {
				if lines[i] == delim {
					found = true
					break
				}
				value = append(value, lines[i])
			}
			if !found {
				return nil, fmt.Errorf("heredoc %s: delimiter %q not found", key, delim)
			}
			out[key] = strings.Join(value, "\n")
		default:
			return nil, fmt.Errorf("line %d: %q is neither key=value nor key<<delimiter", i+1, line)
		}
	}
	return out, nil
}

var stopLine = regexp.MustCompile(`^::stop-commands::([0-9a-f]{32})$`)
