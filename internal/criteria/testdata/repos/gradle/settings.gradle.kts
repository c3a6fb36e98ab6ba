rootProject.name = "demo"
