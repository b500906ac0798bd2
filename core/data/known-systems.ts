/**
 * Multi-word (or punctuated) product and system names, in their canonical spelling. The entity
 * pre-pass (docs/palace-behaviour.md §4.8) counts them whole so the single-word pass does not split
 * "Claude Code" into "Claude" and a common word.
 */
export const KNOWN_SYSTEMS: readonly string[] = [
  'Claude Code', 'Claude Desktop', 'Claude Opus', 'Claude Sonnet', 'Claude Haiku',
  'GitHub Copilot', 'GitHub Actions', 'GitHub Pages', 'GitLab CI', 'Bitbucket Pipelines',
  'Visual Studio Code', 'Visual Studio', 'VS Code', 'Android Studio', 'IntelliJ IDEA', 'Sublime Text', 'Xcode Cloud',
  'Google Cloud Platform', 'Google Cloud', 'Google Drive', 'Google Docs', 'Google Sheets', 'Google Calendar',
  'Google Meet', 'Google Analytics', 'Google Kubernetes Engine', 'Google Colab',
  'Amazon Web Services', 'Amazon S3', 'Amazon EC2', 'AWS Lambda', 'Elastic Kubernetes Service',
  'Microsoft Azure', 'Azure DevOps', 'Azure OpenAI', 'Microsoft Teams', 'Microsoft Word', 'Microsoft Excel',
  'Microsoft Office', 'Power BI', 'SQL Server',
  'GPT-4o', 'GPT-4', 'GPT-3.5', 'GPT-5', 'OpenAI Codex', 'Gemini Pro', 'Llama 3', 'Stable Diffusion', 'Hugging Face',
  'Model Context Protocol', 'Jupyter Notebook', 'Windows Subsystem for Linux', 'Apple Silicon', 'Mac OS',
  'Apache Kafka', 'Apache Spark', 'Apache Airflow', 'Ruby on Rails', 'Spring Boot', 'React Native',
  'Node.js', 'Next.js', 'Vue.js', 'Tailwind CSS', 'Docker Compose', 'Docker Desktop',
  'Home Assistant', 'Raspberry Pi', 'Unreal Engine', 'Final Cut Pro', 'Adobe Photoshop', 'Adobe Illustrator',
];
