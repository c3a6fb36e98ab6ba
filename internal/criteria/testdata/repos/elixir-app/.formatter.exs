[inputs: ["*.exs"]]
