package cmd

import (
	f "fmt"
	"github.com/o/r/util"
)

type Command struct {
	Base
	name string
}

func (c *Command) Execute() { v := util.Parse(c.name)
	run(v)
	f.Println(v)
}

type Runner interface {
	Named
	Run() error
}
