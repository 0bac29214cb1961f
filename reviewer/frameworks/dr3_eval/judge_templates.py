"""The published prompts of the DR3-Eval evaluators, as the public code snapshot has them
(Xiatt-haha/DR3-Eval, Apache-2.0; file and function named under each). The code builds them as
f-strings; here each interpolation is a ``str.format`` field (named in the note) and everything
else is verbatim, so Gavel's judge asks what the evaluator asked. Report and document text is
inserted fenced by the caller (:mod:`reviewer.judge.prompting`).
"""

# ruff: noqa: E501, W291, W293

INSIGHT_USER = """You are an intelligent assistant that labels atomic insights based on whether they can be extracted from a given report.

## Search Query/Task
{query}

## Insights to Label (Total: {count})
{insights}

## Report/Passage
{report}

TASK: Label each insight as 1.0 (support), 0.5 (partial_support), or 0.0 (not_support) based on whether the insight can be extracted from the report.

TERNARY SCORING SYSTEM (三级评分系统)

【SCORE 1.0 - FULLY COVERED (完全覆盖)】
Definition: The report EXPLICITLY and COMPLETELY covers the insight's core meaning.

Requirements for 1.0 (ALL must be met):
✅ The core information point is clearly stated in the report
✅ No significant details are missing
✅ The meaning is unambiguous and complete
✅ A reader would understand the full insight from the report alone

Examples of 1.0:
- Insight: "上海2023年垃圾分类覆盖率达到95%"
  Report: "上海市2023年生活垃圾分类覆盖率已达95%以上" → 1.0 (exact match)
- Insight: "EPNP算法用于相机位姿估计"
  Report: "使用EPNP算法进行相机姿态估计" → 1.0 (same meaning, different wording)

【SCORE 0.5 - PARTIALLY COVERED (部分覆盖)】
Definition: The report contains RELATED content but is INCOMPLETE or VAGUE.

Conditions for 0.5 (any of these):
⚠️ Only part of the core meaning is covered (missing key details)
⚠️ The topic is mentioned but specifics are absent
⚠️ Related concept exists but not the exact point
⚠️ Generalization without the specific insight
⚠️ The connection requires inference (not explicit)

Examples of 0.5:
- Insight: "上海2023年垃圾分类覆盖率达到95%"
  Report: "上海垃圾分类取得显著成效" → 0.5 (topic covered, but no specific percentage)
- Insight: "德国采用双轨制回收系统"
  Report: "发达国家有成熟的回收体系" → 0.5 (generalization, no specific country/system)
- Insight: "AI伦理需要建立问责机制"
  Report: "AI发展需要考虑伦理问题" → 0.5 (related topic, but no specific mechanism)

【SCORE 0.0 - NOT COVERED (未覆盖)】
Definition: The report does NOT contain the insight's information.

Conditions for 0.0:
❌ The topic is completely absent from the report
❌ Only unrelated keywords appear
❌ The information contradicts the insight
❌ No semantic connection exists

Examples of 0.0:
- Insight: "新加坡的垃圾焚烧发电技术"
  Report: (never mentions Singapore) → 0.0
- Insight: "666训练计划的具体内容"
  Report: (never mentions "666" or this training plan) → 0.0

THREE-STEP JUDGMENT PROCESS (三步判断流程)

For EACH insight, follow these steps:

**STEP 1: Extract Core Meaning (提取核心含义)**
- Identify the KEY information points (usually 1-3)
- Note any specific details (numbers, names, dates, methods)
- Example: "上海2023年垃圾分类覆盖率达到95%" 
  → Core: [上海, 2023年, 垃圾分类, 覆盖率, 95%]

**STEP 2: Search Report for Coverage (搜索报告中的覆盖情况)**
- Look for exact matches first
- Then look for semantic equivalents
- Note what IS found and what is MISSING

**STEP 3: Apply Scoring Rules (应用评分规则)**
- If ALL core points are explicitly covered → 1.0
- If SOME core points are covered OR topic is mentioned without specifics → 0.5
- If NO core points are found → 0.0

SEMANTIC EQUIVALENCE GUIDELINES (语义等价判断标准)

✅ The following are considered SEMANTICALLY EQUIVALENT (score 1.0):

a) Synonym Substitution (同义替换):
   - "法律" ≈ "法规" ≈ "条例" ≈ "规定"
   - "成效显著" ≈ "效果明显" ≈ "取得成功"
   - "技术多样化" ≈ "多种技术" ≈ "技术种类丰富"

b) Hypernym/Hyponym (上下位概念):
   - "EPNP算法" → "PnP算法" (EPNP is a type of PnP) → 0.5 (too general)
   - "德国、日本" → "发达国家" / "国际经验" → 0.5 (generalization)
   - "高德地图" → "导航应用" (if context is clear) → 0.5 (less specific)

c) Paraphrasing (改写和概括):
   - "建立AI伦理审查委员会" ≈ "设立AI伦理委员会进行审查" → 1.0
   - "六个伦理设计细节" ≈ "六大伦理问题" → 1.0 (if all 6 are covered)

d) Information Fusion (信息融合):
   - Insight content is integrated into a larger discussion
   - Core information points are preserved with different expression

❌ The following are NOT semantically equivalent (score 0.0 or 0.5):

a) Completely Different Topics:
   - Insight discusses topic A, report discusses topic B
   - No semantic overlap whatsoever

b) Keyword Overlap Only:
   - Same words appear but with completely different meanings
   - Example: Insight says "Apple company", report says "apple fruit"

c) Missing Information:
   - Core information points from insight are completely absent in report
   - Example: Insight mentions specific number "666", report never mentions it

d) Contradictory Information:
   - Report information contradicts the insight
   - Example: Insight says "successful", report says "failed"

BOUNDARY CASE HANDLING (边界情况处理规则)

When uncertain, follow this priority:

1. If >50% of core meaning is covered → 1.0
2. If reasonable semantic connection exists → 1.0
3. If only weak connection or keyword overlap → 0.5
4. If no connection at all → 0.0

Principle: Prefer false positives over false negatives
(The goal of recall assessment is to check if information is missing)

DECISION BOUNDARY EXAMPLES (边界情况示例)

| Insight | Report Content | Score | Reason |
|---------|---------------|-------|--------|
| "上海95%覆盖率" | "上海95%覆盖率" | 1.0 | Exact match |
| "上海95%覆盖率" | "上海覆盖率很高" | 0.5 | Missing specific number |
| "上海95%覆盖率" | "中国垃圾分类进展" | 0.5 | Related topic, no Shanghai detail |
| "上海95%覆盖率" | (not mentioned) | 0.0 | Absent |
| "EPNP算法" | "PnP算法" | 0.5 | Related but not specific variant |
| "EPNP算法" | "EPNP算法" | 1.0 | Exact match |
| "德国双轨制" | "国际经验" | 0.5 | Generalization |
| "德国双轨制" | "德国的双轨制回收" | 1.0 | Specific match |
| "法律规定" | "法规要求" | 1.0 | Synonym substitution |
| "建立委员会" | "设立委员会" | 1.0 | Paraphrasing |

RESPONSE FORMAT

Respond ONLY with valid JSON (no markdown, no extra text):
{{
    "results": [
        {{
            "id": 1,
            "core_points": ["point1", "point2"],
            "found_in_report": "[quote or describe what was found]",
            "missing_points": ["what is missing, if any"],
            "score": 1.0,
            "reasoning": "[brief reason in Chinese, <30 words]"
        }},
        {{
            "id": 2,
            "core_points": ["point1", "point2"],
            "found_in_report": "Related content but incomplete",
            "missing_points": ["specific detail X"],
            "score": 0.5,
            "reasoning": "[brief reason in Chinese, <30 words]"
        }},
        {{
            "id": 3,
            "core_points": ["point1"],
            "found_in_report": "NOT FOUND",
            "missing_points": ["all points missing"],
            "score": 0.0,
            "reasoning": "[brief reason in Chinese, <30 words]"
        }}
    ]
}}

You MUST provide exactly {count} results. Use ONLY scores 1.0, 0.5, or 0.0."""
"""evaluators/information_recall.py, _verify_batch_insights: prompt (query, count, insights, report)."""


INSIGHT_SYSTEM = """You are an intelligent assistant that labels atomic insights based on whether they can be extracted from a given report.

CORE PRINCIPLE: TERNARY SCORING - Use 1.0, 0.5, or 0.0
- Score 1.0 (support): The insight CAN BE FULLY EXTRACTED from the report - all core information is explicitly present
- Score 0.5 (partial_support): The insight CAN BE PARTIALLY EXTRACTED - some information is present but incomplete
- Score 0.0 (not_support): The insight CANNOT BE EXTRACTED - the information is absent or unrelated

SCORING GUIDELINES:

【1.0 - FULLY COVERED】
✅ All core information points are clearly stated
✅ No significant details are missing
✅ The meaning is unambiguous and complete
✅ A reader would understand the full insight from the report alone

Examples:
- "上海2023年垃圾分类覆盖率达到95%" → Report: "上海市2023年生活垃圾分类覆盖率已达95%以上" → 1.0
- "EPNP算法用于相机位姿估计" → Report: "使用EPNP算法进行相机姿态估计" → 1.0

【0.5 - PARTIALLY COVERED】
⚠️ Only part of the core meaning is covered (missing key details)
⚠️ The topic is mentioned but specifics are absent
⚠️ Related concept exists but not the exact point
⚠️ Generalization without the specific insight

Examples:
- "上海2023年垃圾分类覆盖率达到95%" → Report: "上海垃圾分类取得显著成效" → 0.5 (no specific percentage)
- "德国采用双轨制回收系统" → Report: "发达国家有成熟的回收体系" → 0.5 (generalization)
- "AI伦理需要建立问责机制" → Report: "AI发展需要考虑伦理问题" → 0.5 (related but no specific mechanism)

【0.0 - NOT COVERED】
❌ The topic is completely absent from the report
❌ Only unrelated keywords appear
❌ The information contradicts the insight
❌ No semantic connection exists

KEY PRINCIPLE: Be precise with scoring. Use 1.0 only when the insight is fully and explicitly covered. Use 0.5 for partial or vague coverage. Use 0.0 when absent."""
"""evaluators/information_recall.py, _verify_batch_insights: system_prompt."""


INSIGHT_COMPACT_USER = """Label each insight as 1.0 (fully covered), 0.5 (partially covered), or 0.0 (not covered) based on the report.

## Insights ({count} total)
{insights}

## Report
{report}

SCORING:
- 1.0: All core information explicitly present in report
- 0.5: Related content exists but incomplete/vague
- 0.0: Information absent from report

OUTPUT FORMAT (JSON only, no explanation):
{{"results": [{{"id": 1, "score": 1.0}}, {{"id": 2, "score": 0.5}}, ...]}}

Provide exactly {count} results."""
"""evaluators/information_recall.py, _verify_batch_insights_compact: compact_prompt (the fallback)."""


INSIGHT_COMPACT_SYSTEM = """You are a precise evaluator. Output ONLY valid JSON with scores (1.0, 0.5, or 0.0) for each insight. No explanations needed."""
"""evaluators/information_recall.py: compact_system."""


CHECKLIST_USER = """Check if the report satisfies each requirement. Output ONLY true/false for each item.

## Requirements ({count} items)
{requirements}

## Report
{report}

## Rules
- true: Report clearly addresses this requirement with specific content
- false: Not mentioned, or only briefly/superficially mentioned

## Response Format (JSON only, no explanation needed)
{{"results": [{example}]}}"""
"""evaluators/format_compliance.py, _evaluate_checklist_batch: prompt (count, requirements, report, example)."""


CHECKLIST_SYSTEM = """You are a meticulous requirements checker."""
"""evaluators/format_compliance.py: the system message."""


DEPTH_USER = """
        You are an expert Research Report Evaluator.

        You are given:
        1. A research report
        2. A research question that the report attempts to answer

        ------------------
        <research_question>
        {question}
        </research_question>

        <report>
        {report}
        </report>
        ------------------

        ## Instructions:

        **ANALYZE THOROUGHLY**: Examine the report in detail and identify any issues, even small ones. Look for subtle problems, minor inconsistencies, areas that could be improved, or any shortcomings that might affect the quality.

        Evaluate the report according to the **Depth & Quality of Analysis** criterion. Provide:

        - A **score between 1 and 10** (must be an integer) using the scale defined below.
        - A **detailed justification** (2–3 sentences) in **simple plain English** explaining why you gave that score, including any specific issues or strengths you identified.

        ### General Scoring Scale (1-10, integers only):
        - **1** = Completely Unusable: No meaningful content, completely off-topic, or gibberish
        - **2** = Severely Deficient: Major fundamental flaws, almost no useful information
        - **3** = Very Poor: Significant problems throughout, barely addresses the topic
        - **4** = Poor: Multiple major issues, lacks coherence or depth, many gaps
        - **5** = Below Average: Notable weaknesses, incomplete coverage, superficial analysis
        - **6** = Adequate: Meets minimum requirements but with clear limitations and room for improvement
        - **7** = Good: Solid work that addresses the topic well, minor issues present
        - **8** = Very Good: High quality with comprehensive coverage, few minor issues
        - **9** = Excellent: Outstanding work with deep insights, nearly flawless execution
        - **10** = Perfect: Exceptional, publication-ready quality with innovative insights

        **CRITICAL EVALUATION REQUIREMENTS**:
        1. **Use the FULL scoring range**: Distribute scores across 1-10 based on actual quality differences. Do NOT cluster scores in a narrow range.
        2. **Differentiate clearly**: A mediocre report should score 4-5, a good report 6-7, an excellent report 8-9. Only truly exceptional work deserves 10.
        3. **Be discriminating**: Look for specific quality differences between reports. Better analysis, clearer structure, and deeper insights should result in higher scores.
        4. **Penalize appropriately**: Minor issues = small deductions (0.5-1 point), major issues = significant deductions (2-3 points).
        5. **Reward excellence**: If a report demonstrates exceptional depth, clarity, or insight, give it the high score it deserves.
        6. **Compare mentally**: Consider how this report compares to the best and worst possible reports on this topic.

        ### Evaluation Criterion: **Depth & Quality of Analysis**
        
        Evaluate how thoroughly the report analyzes the research question. **BE HARSH**: Look for superficiality, missing details, lack of evidence, weak reasoning.
        - **1-2**: Completely superficial, no real analysis, just lists facts
        - **3-4**: Very basic analysis, misses most key factors, no depth at all
        - **5**: Basic analysis present but very incomplete, misses many important aspects
        - **6**: Covers main points but analysis is shallow, lacks nuance and deeper insights
        - **7**: Adequate analysis with some depth, but still missing sophistication or critical thinking
        - **8**: Good depth with multiple factors explored, shows some sophisticated reasoning (RARE)
        - **9**: Exceptional depth with nuanced understanding and insights (VERY RARE)
        - **10**: Perfect analysis with groundbreaking insights and comprehensive understanding (ALMOST NEVER)

        ------------------

        ## Output format:

        <evaluation>
        <depth_quality>
            <score>1–10 (integer only, based on the scoring scale above)</score>
            <justification>Give a detailed 2–3 sentence justification for your score in simple plain English, including specific issues or strengths.</justification>
        </depth_quality>
        </evaluation>
        """
"""evaluators/depth_quality.py, OverallQualityEvaluator.evaluate: prompt (question, report)."""


DEPTH_SYSTEM = """You are an expert evaluator focusing on deep research report quality."""
"""evaluators/depth_quality.py: the system message."""


CLAIMS_USER = """
你的任务是从报告中提取**所有**带引用的事实陈述，用于**验证事实准确性**。

我们需要检查报告中的每个事实陈述是否被其引用的源文档所支持。

{report}

引用标记是标注信息来源的标记，通常用方括号 `[...]` 包裹，但有时也会用小括号 `(...)` 代替。
**重要：任何方括号 `[...]` 内的内容都可能是引用标记，需要仔细识别。**

- `[long_context: "某文档", chunk 1]` 或 `[long_context: "某文档", chunk 1-3]`
- `[Doc: 报告.pdf]` 或 `[Doc: 报告.pdf, Page 5]` 或 `[Doc: 报告.pdf, Page 5-10]`
- `[文档: 报告.pdf]` 或 `[文档: 报告.pdf, 第5页]`
- `[RAG-1]` 或 `[RAG-1, RAG-2]`
- `[视频: xxx.mp4]` 或 `[Video: xxx.mp4]`
- `[图片: xxx.png]` 或 `[Image: xxx.png]`
- `[音频: xxx.mp3]` 或 `[Audio: xxx.mp3]`

有些模型会直接使用文件名作为引用，可能带有位置信息：
- `[llama.pdf]` → 文档引用
- `[llama.pdf, Section 7]` → 文档引用（带章节信息）
- `[report.pdf, Page 10-15]` → 文档引用（带页码范围）
- `[image.jpg]` → 图片引用
- `[video.mp4, 00:15:30]` → 视频引用（带时间戳）

有些模型会使用自定义的引用格式，例如：
- `[vision_understanding_advanced: image2.jpg, reasoning]` → 图片引用
- `[multimodal_analysis: video.mp4, scene 3]` → 视频引用
- `[document_reader: report.pdf, section 2]` → 文档引用
- `[source_1: data.csv]` → 数据文件引用

**识别规则：只要方括号内包含文件名（带扩展名如 .pdf, .jpg, .mp4 等），就应该识别为引用。根据文件扩展名确定 source_type：**
- `.pdf`, `.docx`, `.doc`, `.txt`, `.md`, `.html` → source_type: "doc"
- `.jpg`, `.jpeg`, `.png`, `.gif`, `.webp` → source_type: "image"
- `.mp4`, `.webm`, `.mov`, `.avi` → source_type: "video"
- `.mp3`, `.wav`, `.m4a`, `.aac`, `.ogg`, `.flac` → source_type: "audio"

有些引用会包含具体的页码或位置信息，请完整保留：
- `[Doc: llama.pdf, Page 34]` → 保留页码信息
- `[Doc: report.pdf, Page 10-15]` → 保留页码范围
- `[long_context: "论文", chunk 5-8]` → 保留 chunk 范围
- `[视频: demo.mp4, 00:15:30]` → 保留时间戳

有些报告会错误地使用小括号代替方括号，例如：
- `(long_context: "某文档", chunk 1)` → 等同于 `[long_context: "某文档", chunk 1]`
- `(Doc: 报告.pdf)` → 等同于 `[Doc: 报告.pdf]`
- `(RAG-1)` → 等同于 `[RAG-1]`

**请同时识别方括号和小括号格式的引用。**

1. **逐个扫描**：从报告开头到结尾，逐个找出每个引用标记（方括号或小括号内的内容）
2. **提取前置句子**：对于每个引用标记，提取它**紧邻前面**的完整句子作为事实陈述
3. **句子边界**：句子以句号、问号、感叹号、冒号结尾，或以换行符分隔
4. **多引用合并**：如果一个句子后面有多个连续的引用标记，将它们合并为一条记录
5. **去除引用标记**：claim_text 中不要包含引用标记本身
6. **保留完整引用**：citations 中保留引用标记的完整内容，包括页码、chunk 等位置信息

1. **参考文献/引用来源部分**：报告末尾列出的参考文献列表
2. **纯引用标记**：没有前置事实陈述的孤立引用标记
3. **标题和目录**：章节标题、目录项
4. **元信息**：如"本报告基于以下来源"等说明性文字
5. **Markdown 链接**：如 `[链接文字](url)` 这种格式不是引用

**输入报告片段**：
```
根据调查数据，2023年全球电动汽车销量达到1400万辆[Doc: 电动汽车报告.pdf, Page 12]。
其中中国市场占比超过60%[long_context: "市场分析", chunk 3][RAG-2]。
该公司的营收增长了25%(Doc: 财报.pdf)。
图片显示了产品的外观设计[vision_understanding_advanced: product.jpg, design_analysis]。
```

**正确提取结果**：
```json
{{
    "claims": [
        {{
            "id": 1,
            "claim_text": "根据调查数据，2023年全球电动汽车销量达到1400万辆",
            "citations": ["[Doc: 电动汽车报告.pdf, Page 12]"],
            "source_type": "doc"
        }},
        {{
            "id": 2,
            "claim_text": "其中中国市场占比超过60%",
            "citations": ["[long_context: \\"市场分析\\", chunk 3]", "[RAG-2]"],
            "source_type": "long_context"
        }},
        {{
            "id": 3,
            "claim_text": "该公司的营收增长了25%",
            "citations": ["[Doc: 财报.pdf]"],
            "source_type": "doc"
        }},
        {{
            "id": 4,
            "claim_text": "图片显示了产品的外观设计",
            "citations": ["[vision_understanding_advanced: product.jpg, design_analysis]"],
            "source_type": "image"
        }}
    ]
}}
```

{{
    "claims": [
        {{
            "id": 1,
            "claim_text": "事实陈述（不含引用标记）",
            "citations": ["[标准化引用格式]"],
            "source_type": "long_context 或 doc 或 rag 或 image 或 video 或 audio"
        }}
    ]
}}

**无论原始报告中使用什么格式，输出时必须统一转换为以下标准格式：**

| 原始格式示例 | 标准化输出格式 |
|-------------|---------------|
| `[Doc: xxx.pdf]`, `[doc: xxx.pdf]`, `[文档: xxx.pdf]`, `[xxx.pdf]` | `[Doc: xxx.pdf]` |
| `[Doc: xxx.pdf, Page 5]`, `[xxx.pdf, Section 7]` | `[Doc: xxx.pdf, Page 5]` |
| `[Image: xxx.jpg]`, `[image: xxx.jpg]`, `[图片: xxx.jpg]`, `[xxx.jpg]` | `[Image: xxx.jpg]` |
| `[Video: xxx.mp4]`, `[video: xxx.mp4]`, `[视频: xxx.mp4]`, `[xxx.mp4]` | `[Video: xxx.mp4]` |
| `[Audio: xxx.mp3]`, `[audio: xxx.mp3]`, `[音频: xxx.mp3]`, `[xxx.mp3]` | `[Audio: xxx.mp3]` |
| `[long_context: "xxx", chunk 1]` | `[long_context: "xxx", chunk 1]`（保持不变） |
| `[RAG-1]` | `[RAG-1]`（保持不变） |
| `[vision_understanding_advanced: xxx.jpg, ...]` | `[Image: xxx.jpg]` |
| `[multimodal_analysis: xxx.mp4, ...]` | `[Video: xxx.mp4]` |
| `(Doc: xxx.pdf)` 小括号格式 | `[Doc: xxx.pdf]` 转为方括号 |

**标准格式规则：**
1. **文档类型**：统一使用 `[Doc: 文件名]` 或 `[Doc: 文件名, Page X]`
2. **图片类型**：统一使用 `[Image: 文件名]`
3. **视频类型**：统一使用 `[Video: 文件名]` 或 `[Video: 文件名, 时间戳]`
4. **音频类型**：统一使用 `[Audio: 文件名]`
5. **long_context**：保持 `[long_context: "标题", chunk X]` 格式不变
6. **RAG**：保持 `[RAG-N]` 格式不变
7. **所有引用必须使用方括号 `[]`，不使用小括号 `()`**

1. **claim_text 中不要包含任何引号**：如果原文中有引号（单引号、双引号、中文引号），请用其他方式表达或直接省略
   - ❌ 错误：`"claim_text": "他说\"这很重要\""`
   - ✅ 正确：`"claim_text": "他说这很重要"`
   - ❌ 错误：`"claim_text": "所谓'创新'是指..."`
   - ✅ 正确：`"claim_text": "所谓创新是指..."`
2. **必须使用双引号**：JSON 的键和字符串值必须使用双引号 `"`，不能使用单引号 `'`
3. **确保 JSON 格式正确**：不要有多余的逗号、缺少逗号等语法错误

- 确保提取完整，不要遗漏任何带引用的事实陈述
- **必须将所有引用转换为上述标准格式**
- source_type 根据第一个引用标记的类型确定
- 保留引用中的页码、chunk、时间戳等位置信息
- **claim_text 中绝对不要包含任何引号字符**

请开始提取："""
"""evaluators/factual_accuracy.py, _extract_claims_single_call: prompt (report)."""


CLAIMS_SYSTEM = """你是一个专业的事实核查专家。"""
"""evaluators/factual_accuracy.py, _extract_claims_single_call: the system message."""


SUPPORT_USER = """
你是一个事实核查专家。请验证以下陈述是否与源文档内容**相关且不矛盾**。

**重要原则：保持评测的稳定，不要产生波动，评价标准较为宽松，只有明显错误才判 false。**

{claims}

只要满足以下**任意一条**，就判定为 true：
1. 陈述中的**任何部分**在源文档中有相关内容
2. 陈述是对源文档内容的**概括、总结、推断或延伸**
3. 陈述使用了不同的措辞，但**语义相近**
4. 陈述包含源文档中**隐含的信息**
5. 对于图片/视频：陈述描述的内容**可能**在视觉上可见或可推断
6. 陈述是对源文档内容的**合理解读**，即使不是唯一解读
7. 源文档中有**部分支持**该陈述的内容

**只有**满足以下条件之一，才判定为 false：
1. 陈述与源文档**直接矛盾**（如数字存在明显误差、事实完全相反）
2. 源文档中**完全没有**陈述的任何相关内容
3. 陈述**不可能**从源文档合理推断出来

- 允许**大幅度的概括和推断**
- 允许**措辞差异**和**表述方式不同**
- 允许**部分正确**的陈述（只要不是完全错误）
- 对于**模糊或不确定**的情况，一律判定为 true
- 对于多模态内容，允许**主观描述**和**合理想象**

- 源文档："公司2023年营收增长了25%"
  - "公司营收大幅增长" → true（概括）
  - "公司业绩表现良好" → true（推断）
  - "公司2023年营收增长了约25%" → true（近似）
  - "公司2023年营收增长了约55%" → false（不符合事实）
  - "公司2023年营收下降了25%" → false（直接矛盾）

- 源文档：一张产品图片
  - "产品外观设计精美" → true（主观描述）
  - "产品采用了现代设计风格" → true（合理推断）

{{"results": [{{"id": 1, "supported": true, "explanation": "简要解释"}}]}}

请开始验证："""
"""evaluators/factual_accuracy.py, _verify_batch_with_api_thread: prompt (claims); the document goes before it, as its own content part "文档内容 (name):" in the code."""
