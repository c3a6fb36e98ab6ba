// Package cobra is a commander providing a simple interface to create powerful modern CLI interfaces.
package cobra

// EnableCommandSorting controls sorting of the slice of commands, which is turned on by default.
var EnableCommandSorting = true
