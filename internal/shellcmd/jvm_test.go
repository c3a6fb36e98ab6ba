package shellcmd

import "testing"

func TestJVMClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, nil, []classifyCase{
		{"./mvnw -B verify", Test | Build, "mvn verify", "mvn"},
		{"mvn -B -DskipTests package", Build, "mvn package", "-"},
		{"mvn -Dtest=FooTest test", Test, "mvn test", "mvn"},
		{"mvn deploy", Deploy, "", ""},
		{"./gradlew check", Test | Lint, "gradle check", "gradle"},
		{"./gradlew build -x test", Build | Lint, "gradle build", "-"},
		{"gradle :core:test --tests '*Foo*'", Test, "gradle test", "gradle"},
		{"gradle publish", Deploy, "", ""},
		{"sbt test", Test, "sbt test", "sbt test"},
	})
}

func TestJVMAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			cmd:   "./mvnw -B -ntp -pl core -Dtest=FooTest verify",
			files: map[string]string{"pom.xml": "<project/>", ".mvn/maven.config": "-T1C\n", "mvnw": "#!/bin/sh\n"},
			steps: []string{"./mvnw -B -ntp -pl core -Dtest=FooTest verify (test mvn)"},
			deps:  Depends{Files: []string{".mvn/maven.config", "pom.xml"}, Runner: "mvn"},
		},
		{
			cmd:   "./gradlew test --tests 'com.x.*' --stacktrace",
			files: map[string]string{"build.gradle.kts": "plugins {}\n", "settings.gradle.kts": "", "gradlew": "#!/bin/sh\n"},
			steps: []string{"./gradlew test --tests com.x.* --stacktrace (test gradle)"},
			deps:  Depends{Files: []string{"build.gradle.kts", "settings.gradle.kts"}, Runner: "gradle"},
		},
	})
}
