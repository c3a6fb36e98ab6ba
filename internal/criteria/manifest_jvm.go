package criteria

import "strings"

func (m *manifests) readJVM(d *dirManifests) {
	if data, ok := m.r.read(join(d.dir, "pom.xml")); ok {
		d.eco("maven")
		src := join(d.dir, "pom.xml")
		mvn := "mvn"
		if m.r.exists(join(d.dir, "mvnw")) {
			mvn = "./mvnw"
			d.fact(join(d.dir, "mvnw"), "Maven wrapper: ./mvnw pins the Maven version")
		}
		text := string(data)
		if !strings.Contains(text, "<project") {
			m.r.unreadable(LayerManifest, src, errString("no <project> element"))
			return
		}
		if strings.Contains(text, "<modules>") {
			d.fact(src, "multi-module Maven build")
		}
		d.add(candidate{command: mvn + " -B test", kind: kTest, sig: "mvn test", source: src, rank: 3,
			evidence: []Finding{finding(LayerManifest, src, "Maven runs the tests in the test phase (-B: no interactive output)")}})
		d.add(candidate{command: mvn + " -B verify", kind: kTest | kBuild | kLint, sig: "mvn verify", source: src, rank: 4})
		d.add(candidate{command: mvn + " -B -DskipTests package", kind: kBuild, sig: "mvn package", source: src, rank: 3})
		d.add(candidate{command: mvn + " -B test-compile", kind: kType, sig: "mvn test-compile", source: src, rank: 3})
		if strings.Contains(text, "jacoco-maven-plugin") {
			d.add(candidate{command: mvn + " -B verify", kind: kTest | kCoverage, sig: "mvn verify", source: src + " jacoco-maven-plugin", rank: 2})
		}
		for _, p := range []struct{ plugin, goal string }{{"spotless-maven-plugin", "spotless:check"}, {"maven-checkstyle-plugin", "checkstyle:check"}, {"maven-pmd-plugin", "pmd:check"}, {"spotbugs-maven-plugin", "spotbugs:check"}} {
			if strings.Contains(text, p.plugin) {
				d.add(candidate{command: mvn + " -B " + p.goal, kind: kLint, sig: "mvn " + p.goal, source: src + " " + p.plugin, rank: 2, strong: true})
			}
		}
	}
	var gradleFile string
	for _, n := range []string{"build.gradle.kts", "build.gradle", "settings.gradle.kts", "settings.gradle"} {
		if m.r.exists(join(d.dir, n)) {
			gradleFile = join(d.dir, n)
			break
		}
	}
	if gradleFile == "" {
		return
	}
	d.eco("gradle")
	gradle := "gradle"
	if m.r.exists(join(d.dir, "gradlew")) {
		gradle = "./gradlew"
		d.fact(join(d.dir, "gradlew"), "Gradle wrapper: ./gradlew pins the Gradle version")
	}
	text := ""
	for _, n := range []string{"build.gradle.kts", "build.gradle"} {
		if data, ok := m.r.read(join(d.dir, n)); ok {
			text += string(data)
		}
	}
	android := strings.Contains(text, "com.android.application") || strings.Contains(text, "com.android.library")
	testTask := "test"
	if android {
		testTask = "testDebugUnitTest"
		d.fact(gradleFile, "Android build: unit tests run in testDebugUnitTest")
	}
	d.add(candidate{command: gradle + " " + testTask, kind: kTest, sig: "gradle test", source: gradleFile, rank: 3,
		evidence: []Finding{finding(LayerManifest, gradleFile, "Gradle build: the test task runs the unit tests")}})
	d.add(candidate{command: gradle + " check", kind: kTest | kLint, sig: "gradle check", source: gradleFile, rank: 4})
	d.add(candidate{command: gradle + " assemble", kind: kBuild, sig: "gradle assemble", source: gradleFile, rank: 3})
	if !android {
		d.add(candidate{command: gradle + " testClasses", kind: kType, sig: "gradle testClasses", source: gradleFile, rank: 3})
	}
	for _, p := range []struct{ marker, task string }{{"spotless", "spotlessCheck"}, {"ktlint", "ktlintCheck"}, {"detekt", "detekt"}, {"checkstyle", "checkstyleMain"}} {
		if strings.Contains(text, p.marker) {
			d.add(candidate{command: gradle + " " + p.task, kind: kLint, sig: "gradle " + p.task, source: gradleFile + " " + p.marker, rank: 2, strong: true})
		}
	}
	if android {
		d.add(candidate{command: gradle + " lint", kind: kLint, sig: "gradle lint", source: gradleFile, rank: 2})
	}
}
