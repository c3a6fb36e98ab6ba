package main

import (
	"fmt"

	"github.com/rhysd/actionlint"
)

func main() {
	fmt.Println(actionlint.LinterOptions{})
}
